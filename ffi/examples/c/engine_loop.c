/*
 * horde from C: an engine's loop over the C ABI (include/horde.h, docs/ffi.md).
 *
 * Builds a 128x96 map from terrain bytes, spawns 3000 units in two groups, steps, drops an
 * explosion, changes a goal, edits the terrain, removes 100 units, steps to frame 300,
 * reads the units back, checks the state hash against the one the Rust Simulation computed
 * for the same commands (argv[1], hex), then saves a snapshot, restores it twice (into a new
 * simulation and into the same one) and checks both continue identically. Along the way it
 * checks that bad calls are refused with the status and message the guide promises, and that
 * a refused call changes nothing.
 *
 * Usage: engine_loop EXPECTED_HASH_HEX [THREADS]
 * Exits 0 and prints one "OK" line when every check passes; prints what failed and exits 1
 * otherwise. The crate's test tests/examples.rs compiles and runs it.
 *
 * The commands must stay the same as in tests/examples.rs (`scenario`), which computes the
 * expected hash with horde's Rust API.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "horde.h"

#define W 128
#define H 96
#define UNITS_PER_GROUP 1500
#define DT (1.0f / 30.0f)

/* Prints the failed call, its status and horde's message, and exits 1. */
static void fail_call(const char *what, HordeStatus status) {
    char message[512];
    size_t len = 0;
    horde_last_error(message, sizeof message, &len);
    fprintf(stderr, "FAIL: %s returned %s: %s\n", what, horde_status_name(status), message);
    exit(1);
}

#define CHECK(call)                                                                          \
    do {                                                                                     \
        HordeStatus status_ = (call);                                                        \
        if (status_ != HORDE_OK) fail_call(#call, status_);                                  \
    } while (0)

#define EXPECT(cond)                                                                         \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "FAIL: %s (line %d)\n", #cond, __LINE__);                        \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static void step_frames(HordeSim *sim, int frames) {
    for (int i = 0; i < frames; i++) CHECK(horde_step(sim, DT));
}

static uint64_t hash_of(HordeSim *sim) {
    uint64_t hash = 0;
    CHECK(horde_state_hash(sim, &hash));
    return hash;
}

/* The call returned `expected`, its message names `word` (unless NULL), and nothing changed. */
static void expect_refused(HordeSim *sim, const char *what, HordeStatus got, HordeStatus expected,
                           const char *word, uint64_t hash_before) {
    char message[512];
    size_t len = 0;
    horde_last_error(message, sizeof message, &len);
    if (got != expected) {
        fprintf(stderr, "FAIL: %s returned %s, expected %s (%s)\n", what, horde_status_name(got),
                horde_status_name(expected), message);
        exit(1);
    }
    if (word && !strstr(message, word)) {
        fprintf(stderr, "FAIL: %s: the message \"%s\" does not name %s\n", what, message, word);
        exit(1);
    }
    if (hash_of(sim) != hash_before) {
        fprintf(stderr, "FAIL: %s was refused but changed the state\n", what);
        exit(1);
    }
}

/* The cells of the `w x h` rectangle at (x, y), row by row. */
static size_t rect_cells(HordeCell *out, uint32_t x, uint32_t y, uint32_t w, uint32_t h) {
    size_t n = 0;
    for (uint32_t cy = y; cy < y + h; cy++)
        for (uint32_t cx = x; cx < x + w; cx++) out[n++] = (HordeCell){cx, cy};
    return n;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s EXPECTED_HASH_HEX [THREADS]\n", argv[0]);
        return 2;
    }
    uint64_t expected = strtoull(argv[1], NULL, 16);
    uint32_t threads = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 2;

    EXPECT(horde_abi_version() == HORDE_ABI_VERSION);

    /* The map: steel border, a brick wall down x = 62..63 with a gap at y = 40..55, a pond,
     * a forest. terrain[y * W + x] is cell (x, y). */
    static uint8_t terrain[W * H];
    for (uint32_t y = 0; y < H; y++) {
        for (uint32_t x = 0; x < W; x++) {
            uint8_t t = HORDE_TERRAIN_EMPTY;
            if (x == 0 || y == 0 || x == W - 1 || y == H - 1) t = HORDE_TERRAIN_STEEL_PLATE;
            else if ((x == 62 || x == 63) && y >= 8 && y < 88 && !(y >= 40 && y < 56))
                t = HORDE_TERRAIN_BRICK_WALL;
            else if (x >= 80 && x < 90 && y >= 44 && y < 52) t = HORDE_TERRAIN_WATER;
            else if (x >= 90 && x < 100 && y >= 10 && y < 20) t = HORDE_TERRAIN_FOREST;
            terrain[y * W + x] = t;
        }
    }

    HordeConfig config;
    CHECK(horde_config_default(&config));
    config.seed = 7;
    config.threads = threads;

    HordeSim *sim = NULL;
    CHECK(horde_sim_create(W, H, terrain, sizeof terrain, &config, &sim));

    /* Two groups, each heading for a 5x5 goal on the far side of the wall. */
    HordeCell goal[25];
    uint16_t group_a = 0, group_b = 0;
    CHECK(horde_add_group(sim, goal, rect_cells(goal, 110, 20, 5, 5), &group_a));
    CHECK(horde_add_group(sim, goal, rect_cells(goal, 110, 70, 5, 5), &group_b));

    /* 1500 units a group, in blocks of 50 x 30 on the left. */
    static HordeUnitSpec specs[2 * UNITS_PER_GROUP];
    static uint32_t ids[2 * UNITS_PER_GROUP];
    for (int i = 0; i < 2 * UNITS_PER_GROUP; i++) {
        int k = i % UNITS_PER_GROUP;
        CHECK(horde_unit_spec_default(&specs[i]));
        specs[i].x = 4.5f + (float)(k % 50);
        specs[i].y = (i < UNITS_PER_GROUP ? 4.5f : 50.5f) + (float)(k / 50);
        specs[i].radius = 0.4f;
        specs[i].group = i < UNITS_PER_GROUP ? group_a : group_b;
    }
    size_t spawned = 0;
    CHECK(horde_spawn(sim, specs, 2 * UNITS_PER_GROUP, ids, &spawned));
    EXPECT(spawned == 2 * UNITS_PER_GROUP);
    for (int i = 0; i < 2 * UNITS_PER_GROUP; i++) EXPECT(ids[i] == (uint32_t)i);

    step_frames(sim, 60);

    /* An explosion in the middle of group A, lasting a quarter of a second. */
    HordeForceField blast;
    CHECK(horde_force_field_default(&blast));
    blast.kind = HORDE_FORCE_EXPLOSION;
    blast.x = 30.0f;
    blast.y = 18.0f;
    blast.radius = 10.0f;
    blast.strength = 600.0f;
    blast.duration = 0.25f;
    uint64_t blast_id = 99;
    CHECK(horde_add_force(sim, &blast, &blast_id));
    EXPECT(blast_id == 0);

    step_frames(sim, 60);

    /* Group B heads elsewhere; the gap narrows; a hole is knocked in the wall; 100 units
     * die (ids 0, 10, ..., 990: removed in this order). */
    CHECK(horde_set_group_goal(sim, group_b, goal, rect_cells(goal, 110, 40, 5, 5)));
    CHECK(horde_set_terrain_rect(sim, 62, 40, 2, 4, HORDE_TERRAIN_BRICK_WALL));
    CHECK(horde_set_terrain(sim, 62, 20, HORDE_TERRAIN_EMPTY));
    CHECK(horde_set_terrain(sim, 63, 20, HORDE_TERRAIN_EMPTY));
    uint32_t dead[100];
    for (uint32_t i = 0; i < 100; i++) dead[i] = i * 10;
    CHECK(horde_despawn(sim, dead, 100));

    /* Removing a unit twice is an error, with a message; nothing changes. */
    HordeStatus again = horde_despawn(sim, dead, 1);
    EXPECT(again == HORDE_ERROR_NO_SUCH_UNIT);
    size_t message_len = 0;
    EXPECT(horde_last_error(NULL, 0, &message_len) == HORDE_ERROR_BUFFER_TOO_SMALL);
    EXPECT(message_len > 0);

    /* Refusals, each with a message naming what was wrong and the state unchanged: a boolean
     * other than 0 or 1 and a NaN or zero direction on any force kind, a NULL buffer with a
     * capacity, a config setting out of range (named as this header names it). */
    uint64_t before = hash_of(sim);
    HordeForceField bad = blast;
    bad.clockwise = 2;
    expect_refused(sim, "explosion with clockwise = 2", horde_add_force(sim, &bad, &blast_id),
                   HORDE_ERROR_INVALID_ARGUMENT, "clockwise", before);
    bad = blast;
    bad.direction_x = NAN;
    expect_refused(sim, "explosion with a NaN direction", horde_add_force(sim, &bad, &blast_id),
                   HORDE_ERROR_INVALID_ARGUMENT, "direction", before);
    bad = blast;
    bad.direction_x = 0.0f;
    bad.direction_y = 0.0f;
    expect_refused(sim, "explosion with direction (0, 0)", horde_add_force(sim, &bad, &blast_id),
                   HORDE_ERROR_INVALID_ARGUMENT, "direction", before);
    size_t needed = 0;
    expect_refused(sim, "read_units into NULL with a capacity",
                   horde_read_units(sim, NULL, 10, &needed), HORDE_ERROR_NULL_POINTER, NULL, before);
    EXPECT(needed == 2 * UNITS_PER_GROUP - 100);
    expect_refused(sim, "read_positions into NULL with a capacity",
                   horde_read_positions(sim, NULL, 10, &needed), HORDE_ERROR_NULL_POINTER, NULL,
                   before);
    HordeConfig wrong = config;
    wrong.contact_relaxation = 3.0f;
    HordeSim *never = NULL;
    expect_refused(sim, "config with contact_relaxation = 3",
                   horde_sim_create(W, H, terrain, sizeof terrain, &wrong, &never),
                   HORDE_ERROR_INVALID_ARGUMENT, "contact_relaxation", before);
    EXPECT(never == NULL);

    step_frames(sim, 180);

    uint64_t frame = 0;
    CHECK(horde_frame(sim, &frame));
    EXPECT(frame == 300);

    /* Read every unit back, in id order. */
    size_t count = 0;
    CHECK(horde_unit_count(sim, &count));
    EXPECT(count == 2 * UNITS_PER_GROUP - 100);
    HordeUnit *units = malloc(count * sizeof *units);
    float *xy = malloc(2 * count * sizeof *xy);
    EXPECT(units && xy);
    size_t small = 0;
    EXPECT(horde_read_units(sim, units, count - 1, &small) == HORDE_ERROR_BUFFER_TOO_SMALL);
    EXPECT(small == count);
    size_t read = 0;
    CHECK(horde_read_units(sim, units, count, &read));
    EXPECT(read == count);
    CHECK(horde_read_positions(sim, xy, count, &read));
    EXPECT(read == count);
    double sum_x_a = 0;
    size_t in_a = 0, resting = 0;
    for (size_t i = 0; i < count; i++) {
        const HordeUnit *u = &units[i];
        EXPECT(i == 0 || units[i - 1].id < u->id);
        EXPECT(!(u->id % 10 == 0 && u->id < 1000));
        EXPECT(u->group == (u->id < UNITS_PER_GROUP ? group_a : group_b));
        EXPECT(isfinite(u->x) && isfinite(u->y) && u->x > 0 && u->x < W && u->y > 0 && u->y < H);
        EXPECT(isfinite(u->vx) && isfinite(u->vy) && u->stun >= 0);
        EXPECT((u->flags & HORDE_UNIT_QUARANTINED) == 0);
        EXPECT(xy[2 * i] == u->x && xy[2 * i + 1] == u->y);
        if (u->group == group_a) {
            sum_x_a += u->x;
            in_a++;
        }
        if (u->flags & (HORDE_UNIT_ARRIVED | HORDE_UNIT_SETTLED)) resting++;
    }
    /* Group A started around x = 29 and walks east toward x = 112. */
    EXPECT(sum_x_a / (double)in_a > 45.0);

    HordeStageTime stages[32];
    size_t stage_count = 0;
    double frame_seconds = 0;
    CHECK(horde_stage_times(sim, stages, 32, &stage_count, &frame_seconds));
    EXPECT(stage_count >= 8 && strcmp(stages[stage_count - 1].name, "sort_units") == 0);

    /* The state hash is the Rust Simulation's for the same commands. */
    uint64_t hash = hash_of(sim);
    if (hash != expected) {
        fprintf(stderr, "FAIL: state hash %016" PRIx64 ", the Rust Simulation's is %016" PRIx64 "\n",
                hash, expected);
        return 1;
    }

    /* Save a snapshot into our own buffer. */
    size_t size = 0;
    CHECK(horde_snapshot_size(sim, &size));
    uint8_t *snapshot = malloc(size);
    EXPECT(snapshot);
    size_t written = 0;
    EXPECT(horde_snapshot_write(sim, snapshot, size - 1, &written) == HORDE_ERROR_BUFFER_TOO_SMALL);
    EXPECT(written == size);
    CHECK(horde_snapshot_write(sim, snapshot, size, &written));
    EXPECT(written == size);

    /* A second simulation from it, on one thread, continues exactly as the first. */
    HordeSim *copy = NULL;
    CHECK(horde_sim_create_from_snapshot(snapshot, size, 1, &copy));
    EXPECT(hash_of(copy) == hash);
    step_frames(sim, 30);
    step_frames(copy, 30);
    uint64_t later = hash_of(sim);
    EXPECT(hash_of(copy) == later);
    EXPECT(later != hash);

    /* Restoring into the first goes back to frame 300, and on again to the same state. */
    CHECK(horde_snapshot_restore(sim, snapshot, size));
    CHECK(horde_frame(sim, &frame));
    EXPECT(frame == 300);
    EXPECT(hash_of(sim) == hash);
    step_frames(sim, 30);
    EXPECT(hash_of(sim) == later);

    /* Bad snapshot bytes are refused, and the state stays. */
    snapshot[size / 2] ^= 0x5a;
    EXPECT(horde_snapshot_restore(sim, snapshot, size) == HORDE_ERROR_SNAPSHOT);
    EXPECT(hash_of(sim) == later);

    CHECK(horde_sim_free(copy));
    CHECK(horde_sim_free(sim));
    free(snapshot);
    free(xy);
    free(units);

    printf("horde C example OK: %zu units, %zu at rest, frame 300 hash %016" PRIx64
           " (= Rust), snapshot %zu bytes restored twice, %zu stages, last frame %.3f ms, "
           "%u threads\n",
           count, resting, hash, size, stage_count, frame_seconds * 1e3, threads);
    return 0;
}
