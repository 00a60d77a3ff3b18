# cmake -DPROGRAM=path -DKIND=man|bash|zsh|fish -DOUT=file -P generate-doc.cmake
execute_process(COMMAND ${PROGRAM} --generate-docs=${KIND} OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --generate-docs=${KIND} failed: ${rc}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
