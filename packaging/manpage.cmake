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
.SH FILES
.TP
.I /usr/share/shardplan/samples
Sample models, clusters, workloads, scenarios and plans.
")
