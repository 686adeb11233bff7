# scaletwin_embed_texts(TARGET FOLDER FUNCTION INCLUDE NAMESPACE TYPE): embeds ${PROJECT_SOURCE_DIR}/FOLDER/*.json
# into TARGET as NAMESPACE::FUNCTION() (cmake/embed_texts.cmake), regenerated whenever a file changes;
# CONFIGURE_DEPENDS re-globs when a file is added or removed. The binary then works from any directory.
function(scaletwin_embed_texts target folder function include namespace type)
  file(GLOB files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*.json)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${function}.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} "-DFILES=${files}" -DINCLUDE=${include} -DNAMESPACE=${namespace}
            -DTYPE=${type} -DFUNCTION=${function} -P ${PROJECT_SOURCE_DIR}/cmake/embed_texts.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/embed_texts.cmake
    COMMENT "Embedding ${folder}/*.json"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()
