#ifndef ADD_CUSTOM_TILING_H
#define ADD_CUSTOM_TILING_H
#include <cstdint>
constexpr uint32_t TILE_LENGTH = 256;   // elements per block
#endif
