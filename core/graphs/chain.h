/* encore: a captured graph's nodes, in launch order (chain.c). */
#ifndef ENCORE_CHAIN_H
#define ENCORE_CHAIN_H

#include <cuda.h>
#include <stdint.h>

#include "core/state/stream_state.h"

/* The kernel nodes of a graph captured from recs[0..n), in launch order, or
 * NULL. Capturing one stream gives a chain: node i depends on node i - 1
 * alone. Each node is checked against its launch (kernel, function,
 * arguments), so a node is patched only where it is certain which launch it
 * is. */
enc_graph_node *enc_chain_nodes(CUgraph g, const enc_rec *recs, const unsigned char *arena, uint32_t n);

#endif
