# Writes a C++ source holding a text file's content as a string constant (cmake -DIN=... -DOUT=... -DNAME=...).
file(READ "${IN}" text)
file(WRITE "${OUT}" "// Generated at build time from ${IN}; edit that file instead.\nnamespace sp {\nextern const char* const ${NAME};\nconst char* const ${NAME} = R\"embedded(${text})embedded\";\n} // namespace sp\n")
