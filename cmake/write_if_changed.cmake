# kwb_write_if_changed(PATH TEXT): writes TEXT to PATH unless PATH already holds it, so that a
# generated header regenerated with the same content does not rebuild what includes it.
function(kwb_write_if_changed path text)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${text}")
endfunction()
