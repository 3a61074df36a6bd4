# .npy file reading and writing; client/CMakeLists.txt includes this file.
add_library(resident_npy ${CMAKE_CURRENT_LIST_DIR}/npy.cc)
target_link_libraries(resident_npy PUBLIC resident_base)
resident_strict(resident_npy)
