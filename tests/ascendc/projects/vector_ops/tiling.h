// The tiling data the host computes for tiled_scale (shared by host and kernel).
#ifndef TILED_SCALE_TILING_H
#define TILED_SCALE_TILING_H
#include <cstdint>

struct TilingData {
    uint32_t totalLength;   // elements over all blocks
    uint32_t tileNum;       // tiles per block
    float scale;
    float bias;
};

#endif
