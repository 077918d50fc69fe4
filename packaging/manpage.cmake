# Writes OUT, a man page for EXE made from its own usage text (EXE help) and version.
# Usage: cmake -DEXE=... -DVERSION=... -DOUT=... -P manpage.cmake
execute_process(COMMAND ${EXE} help OUTPUT_VARIABLE usage RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} help failed (${rc})")
endif()
# roff: a backslash is \e; a line starting with . or ' would be a request.
string(REPLACE "\\" "\\e" usage "${usage}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" usage "${usage}")
string(REGEX REPLACE "^usage: [^\n]*\n\n?" "" body "${usage}")
# Each command's options, from `EXE help COMMAND` (the table its parser is built from).
string(REGEX MATCHALL "\n  [a-z]+ " heads "${usage}")
set(verbs "")
foreach(h IN LISTS heads)
  string(STRIP "${h}" v)
  if(NOT v STREQUAL "help")
    list(APPEND verbs "${v}")
  endif()
endforeach()
list(REMOVE_DUPLICATES verbs)
set(options "")
foreach(v IN LISTS verbs)
  execute_process(COMMAND ${EXE} help ${v} OUTPUT_VARIABLE one RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${EXE} help ${v} failed (${rc})")
  endif()
  string(REPLACE "\\" "\\e" one "${one}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" one "${one}")
  string(REGEX REPLACE "\nexit status:[^\n]*\n" "" one "${one}")
  string(APPEND options ".SS ${v}\n.nf\n${one}.fi\n")
endforeach()
file(WRITE ${OUT} ".TH SHARDPLAN 1 \"\" \"shardplan ${VERSION}\" \"User Commands\"
.SH NAME
shardplan \\- plan the sharding of distributed LLM inference
.SH SYNOPSIS
.B shardplan
\\fIcommand\\fR [\\fIoptions\\fR]
.br
.B shardplan help
\\fIcommand\\fR
.br
.B shardplan --version
.SH DESCRIPTION
Finds the parallelism degrees and per-operator sharding with the highest throughput for a model on a GPU
cluster. \\fBshardplan help\\fR \\fIcommand\\fR (or \\fIcommand\\fR \\fB--help\\fR) prints one command's usage.
.SH COMMANDS
.nf
${body}.fi
.SH OPTIONS
${options}.SH FILES
.TP
.I /usr/share/shardplan/samples
Sample models, clusters, workloads, scenarios and plans.
")
