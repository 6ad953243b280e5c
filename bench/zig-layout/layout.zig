// Karmem's layout test (Silva et al. 2024, §5.1.2), written from the paper's Figures
// 20–29 (Zig). The run_* bodies are the figures' code; the differences are what this Zig
// (0.17) requires: `const` for locals the figures declared `var` but never mutate (an
// error since Zig 0.12), and an `init` that fills the arrays (the paper's host did that
// part; its code is not in the figures). Built to wasm32 and as a native shared library
// by bench/experiments/layout-zig.mjs; timed from JS like the Rust build.
const std = @import("std");
const builtin = @import("builtin");

const gpa = if (builtin.cpu.arch.isWasm()) std.heap.wasm_allocator else std.heap.c_allocator;

// Figure 20.
const ScooterAoS = struct {
    id: u32 = 0,
    distance: u32 = 0,
};

const ScooterSoA = struct {
    ids: []u32 = undefined,
    distances: []u32 = undefined,
};

var scooters_aos: []ScooterAoS = undefined;

var scooters_soa: ScooterSoA = ScooterSoA{};

var scooters_aos_u32: []u32 = undefined;

var scooters_aop: []*ScooterAoS = undefined;

var scooters_aop_u32: []u32 = undefined;

var scooters_count: u32 = 0;

var scooters_runtime_stride: u32 = 0;

/// Allocates `count` scooters in every layout (id i, distance i * 100); the stride
/// comes in at run time, as in the paper. Returns 0, or 1 when allocation failed.
export fn init(count: u32, runtime_stride: u32) u32 {
    scooters_aos = gpa.alloc(ScooterAoS, count) catch return 1;
    scooters_soa.ids = gpa.alloc(u32, count) catch return 1;
    scooters_soa.distances = gpa.alloc(u32, count) catch return 1;
    scooters_aop = gpa.alloc(*ScooterAoS, count) catch return 1;
    for (0..count) |i| {
        const v: u32 = @intCast(i);
        scooters_aos[i] = .{ .id = v, .distance = v *% 100 };
        scooters_soa.ids[i] = v;
        scooters_soa.distances[i] = v *% 100;
        const p = gpa.create(ScooterAoS) catch return 1;
        p.* = .{ .id = v, .distance = v *% 100 };
        scooters_aop[i] = p;
    }
    // "uses AoS as a vector of u32 ... points to the same location as scooters_aos".
    scooters_aos_u32 = std.mem.bytesAsSlice(u32, std.mem.sliceAsBytes(scooters_aos));
    scooters_count = count;
    scooters_runtime_stride = runtime_stride;
    return 0;
}

/// Sum of every layout's distances (wrapping): the same in all layouts after the same runs.
export fn checksum(layout: u32) u32 {
    var sum: u32 = 0;
    for (0..scooters_count) |i| {
        sum +%= switch (layout) {
            0 => scooters_aos[i].distance,
            1 => scooters_soa.distances[i],
            else => scooters_aop[i].distance,
        };
    }
    return sum;
}

// Figure 21.
export fn run_native(speed: u32) void {
    for (scooters_aos) |*scooter| {
        scooter.*.distance +%= speed;
    }
}

// Figure 22.
export fn run_fixed(speed: u32) void {
    const stride = 2;
    const offset = 1;

    var i: u32 = offset;
    const max: u32 = scooters_count * stride;
    while (i < max) : (i += stride) {
        scooters_aos_u32[i] +%= speed;
    }
}

// Figure 23.
export fn run_stride(speed: u32) void {
    const stride = scooters_runtime_stride;
    const offset = 1;

    var i: u32 = offset;
    const max: u32 = scooters_count * stride;
    while (i < max) : (i += stride) {
        scooters_aos_u32[i] +%= speed;
    }
}

// Figure 24.
export fn run_simd(speed: u32) void {
    const stride = 4;
    const speed_mask: @Vector(stride, u32) = [stride]u32{ 0, speed, 0, speed };

    var i: u32 = 0;
    const max: u32 = scooters_count * (stride * @sizeOf(u32) / @sizeOf(ScooterAoS));
    while (i < max) : (i += stride) {
        var distances: @Vector(stride, u32) = scooters_aos_u32[i..][0..stride].*;

        distances = distances + speed_mask;

        scooters_aos_u32[i..][0..stride].* = distances;
    }
}

// Figure 26.
export fn run_soa(speed: u32) void {
    var i: u32 = 0;

    while (i < scooters_count) : (i += 1) {
        scooters_soa.distances[i] +%= speed;
    }
}

// Figure 27.
export fn run_soa_simd(speed: u32) void {
    const stride = 4;
    const speed_mask: @Vector(stride, u32) = [_]u32{ speed, speed, speed, speed };

    var i: u32 = 0;
    while (i < scooters_count) : (i += stride) {
        var distances: @Vector(stride, u32) = scooters_soa.distances[i..][0..stride].*;

        distances = distances + speed_mask;

        scooters_soa.distances[i..][0..stride].* = distances;
    }
}

// Figure 29.
export fn run_aop(speed: u32) void {
    for (scooters_aop) |scooter| {
        scooter.*.distance +%= speed;
    }
}

/// The harness, not a figure: `reps` calls of variant `variant` (0 native, 1 fixed,
/// 2 stride, 3 fixed+SIMD, 4 SoA, 5 SoA+SIMD, 6 AoP) with `speed`, so a timed call from JS
/// is one boundary crossing for many runs, as in the Rust build's `layout_run`.
export fn run_reps(variant: u32, reps: u32, speed: u32) void {
    for (0..reps) |_| {
        switch (variant) {
            0 => run_native(speed),
            1 => run_fixed(speed),
            2 => run_stride(speed),
            3 => run_simd(speed),
            4 => run_soa(speed),
            5 => run_soa_simd(speed),
            else => run_aop(speed),
        }
    }
}
