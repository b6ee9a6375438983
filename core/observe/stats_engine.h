/* encore: the one callback the observers' floor (core/observe/) has into
 * the engine above it: what the statistics ask for at a snapshot, registered
 * by the engine at start-up (core/path/init.c). The observers name nothing
 * of the engine's (scripts/check-includes). */
#ifndef ENCORE_STATS_ENGINE_H
#define ENCORE_STATS_ENGINE_H

#include <stdint.h>

#include "core/observe/stats.h"

/* What the statistics ask the engine for, registered by it at start-up (core/path/init.c): the observers name
 * nothing of the engine's. A field left NULL leaves its part of the summary 0. */
typedef struct enc_stats_engine {
    /* The time estimate of s from its measured fields, in total and by stream (core/streams/worth.c
     * enc_stats_time; enc_stats_snapshot calls it last). */
    void (*time)(enc_summary *s);
    /* Event nodes turned back; *not_held: events churn, 0/1 (core/graphs/nodes.c enc_nodes_turned_back). */
    uint64_t (*turned_back)(uint64_t *not_held);
} enc_stats_engine;
void enc_stats_register(const enc_stats_engine *e); /* e lives as long as the process */

#endif
