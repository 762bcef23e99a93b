// horde from C# over P/Invoke (Unity, Godot's C#, a .NET or Mono engine): the same commands
// as examples/c/engine_loop.c, through the same C ABI (include/horde.h, docs/ffi.md).
//
// Build and run (Mono):   mcs -out:EngineLoop.exe EngineLoop.cs
//                         LD_LIBRARY_PATH=<dir of libhorde_ffi.so> mono EngineLoop.exe HASH_HEX
// HASH_HEX is the state hash the Rust Simulation computes for these commands at frame 300
// (tests/examples.rs passes it). Exits 0 and prints one "OK" line when every check passes.

using System;
using System.Runtime.InteropServices;

static class Horde
{
    const string Lib = "horde_ffi"; // libhorde_ffi.so, horde_ffi.dll, libhorde_ffi.dylib

    public const uint AbiVersion = 2;
    public const int Ok = 0;
    public const int ErrorBufferTooSmall = 3;
    public const int ErrorNoSuchUnit = 5;
    public const int ErrorSnapshot = 9;
    public const byte TerrainEmpty = 0, TerrainBrickWall = 1, TerrainSteelPlate = 2;
    public const byte TerrainForest = 3, TerrainWater = 4;
    public const uint ForceExplosion = 0;
    public const uint UnitArrived = 1, UnitSettled = 2, UnitQuarantined = 4, UnitBlocked = 16;
    public const uint UnitAsleep = 32, UnitUnreachable = 64;

    // Field for field the structs of horde.h (LayoutKind.Sequential lays them out as C does).
    [StructLayout(LayoutKind.Sequential)]
    public struct Config
    {
        // settings: begin (written from horde::settings::SETTINGS by tests/settings.rs)
        public ulong seed;
        public uint threads;
        public uint batch_size;
        public uint navigation;
        public uint partial_fields;
        public uint size_classes;
        public uint contact_passes;
        public float contact_relaxation;
        public uint line_of_sight_radius;
        public float probe_length;
        public float probe_inflate;
        public float fan_step;
        public uint fan_steps;
        public float avoid_weight;
        public float separation_weight;
        public float separation_push;
        public float separation_range;
        public float jitter;
        public float arrival_distance;
        public float slow_distance;
        public float max_external_speed;
        public float stun_threshold;
        public float stun_per_impulse;
        public float max_stun;
        public float drag;
        public float slippery_drag;
        public float snap_speed;
        // settings: end
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct Cell { public uint x, y; }

    [StructLayout(LayoutKind.Sequential)]
    public struct UnitSpec
    {
        public float x, y, radius, max_speed, turn_rate, mass;
        public ushort group;
        public byte layer, controllable;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct ForceField
    {
        public uint kind;
        public float x, y, radius, strength, duration;
        public uint falloff;
        public float time_decay, direction_x, direction_y;
        public byte clockwise, affects_controllable;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct Unit
    {
        public uint id;
        public ushort group;
        public byte layer, reserved;
        public uint flags;
        public float x, y, vx, vy, external_x, external_y, stun, radius;
    }

    [DllImport(Lib)] public static extern uint horde_abi_version();
    [DllImport(Lib)] public static extern IntPtr horde_status_name(int status);
    [DllImport(Lib)] public static extern int horde_last_error(byte[] buffer, UIntPtr capacity, out UIntPtr len);
    [DllImport(Lib)] public static extern int horde_config_default(out Config config);
    [DllImport(Lib)] public static extern int horde_unit_spec_default(out UnitSpec spec);
    [DllImport(Lib)] public static extern int horde_force_field_default(out ForceField field);
    [DllImport(Lib)] public static extern int horde_sim_create(uint width, uint height, byte[] terrain, UIntPtr terrainLen, ref Config config, out IntPtr sim);
    [DllImport(Lib)] public static extern int horde_sim_create_from_snapshot(byte[] bytes, UIntPtr len, uint threads, out IntPtr sim);
    [DllImport(Lib)] public static extern int horde_sim_free(IntPtr sim);
    [DllImport(Lib)] public static extern int horde_add_group(IntPtr sim, Cell[] goals, UIntPtr count, out ushort group);
    [DllImport(Lib)] public static extern int horde_set_group_goal(IntPtr sim, ushort group, Cell[] goals, UIntPtr count);
    [DllImport(Lib)] public static extern int horde_spawn(IntPtr sim, UnitSpec[] specs, UIntPtr count, [Out] uint[] ids, out UIntPtr spawned);
    [DllImport(Lib)] public static extern int horde_despawn(IntPtr sim, uint[] ids, UIntPtr count);
    [DllImport(Lib)] public static extern int horde_add_force(IntPtr sim, ref ForceField field, out ulong id);
    [DllImport(Lib)] public static extern int horde_set_terrain(IntPtr sim, uint x, uint y, byte terrain);
    [DllImport(Lib)] public static extern int horde_set_terrain_rect(IntPtr sim, uint x, uint y, uint w, uint h, byte terrain);
    [DllImport(Lib)] public static extern int horde_step(IntPtr sim, float dt);
    [DllImport(Lib)] public static extern int horde_frame(IntPtr sim, out ulong frame);
    [DllImport(Lib)] public static extern int horde_unit_count(IntPtr sim, out UIntPtr count);
    [DllImport(Lib)] public static extern int horde_read_units(IntPtr sim, [Out] Unit[] units, UIntPtr capacity, out UIntPtr count);
    [DllImport(Lib)] public static extern int horde_read_positions(IntPtr sim, [Out] float[] xy, UIntPtr capacity, out UIntPtr count);
    [DllImport(Lib)] public static extern int horde_state_hash(IntPtr sim, out ulong hash);
    [DllImport(Lib)] public static extern int horde_snapshot_size(IntPtr sim, out UIntPtr size);
    [DllImport(Lib)] public static extern int horde_snapshot_write(IntPtr sim, [Out] byte[] buffer, UIntPtr capacity, out UIntPtr len);
    [DllImport(Lib)] public static extern int horde_snapshot_restore(IntPtr sim, byte[] bytes, UIntPtr len);

    /// Throws with horde's message when a call did not return HORDE_OK.
    public static void Check(int status, string what)
    {
        if (status == Ok) return;
        UIntPtr len;
        horde_last_error(null, UIntPtr.Zero, out len);
        var buffer = new byte[(int)len.ToUInt64() + 1];
        horde_last_error(buffer, (UIntPtr)buffer.Length, out len);
        string message = System.Text.Encoding.UTF8.GetString(buffer, 0, (int)len.ToUInt64());
        string name = Marshal.PtrToStringAnsi(horde_status_name(status));
        throw new Exception(what + " returned " + name + ": " + message);
    }
}

static class EngineLoop
{
    const uint W = 128, H = 96;
    const int PerGroup = 1500;

    static void Expect(bool condition, string what)
    {
        if (!condition) throw new Exception("check failed: " + what);
    }

    static Horde.Cell[] Rect(uint x, uint y, uint w, uint h)
    {
        var cells = new Horde.Cell[w * h];
        int n = 0;
        for (uint cy = y; cy < y + h; cy++)
            for (uint cx = x; cx < x + w; cx++) cells[n++] = new Horde.Cell { x = cx, y = cy };
        return cells;
    }

    // 1/30 as the float the C example and the Rust test use (0x3D088889): taken from its
    // bits, so that no compiler's extended precision can round it differently.
    static readonly float Dt = BitConverter.ToSingle(BitConverter.GetBytes(0x3D088889), 0);

    static void Steps(IntPtr sim, int frames)
    {
        for (int i = 0; i < frames; i++) Horde.Check(Horde.horde_step(sim, Dt), "horde_step");
    }

    static ulong Hash(IntPtr sim)
    {
        ulong hash;
        Horde.Check(Horde.horde_state_hash(sim, out hash), "horde_state_hash");
        return hash;
    }

    static int Main(string[] args)
    {
        try
        {
            return Run(args);
        }
        catch (Exception e)
        {
            Console.Error.WriteLine("FAIL: " + e.Message);
            return 1;
        }
    }

    static int Run(string[] args)
    {
        if (args.Length < 1)
        {
            Console.Error.WriteLine("usage: mono EngineLoop.exe EXPECTED_HASH_HEX");
            return 2;
        }
        ulong expected = Convert.ToUInt64(args[0], 16);
        Expect(Horde.horde_abi_version() == Horde.AbiVersion, "ABI version");

        var terrain = new byte[W * H];
        for (uint y = 0; y < H; y++)
            for (uint x = 0; x < W; x++)
            {
                byte t = Horde.TerrainEmpty;
                if (x == 0 || y == 0 || x == W - 1 || y == H - 1) t = Horde.TerrainSteelPlate;
                else if ((x == 62 || x == 63) && y >= 8 && y < 88 && !(y >= 40 && y < 56)) t = Horde.TerrainBrickWall;
                else if (x >= 80 && x < 90 && y >= 44 && y < 52) t = Horde.TerrainWater;
                else if (x >= 90 && x < 100 && y >= 10 && y < 20) t = Horde.TerrainForest;
                terrain[y * W + x] = t;
            }

        Horde.Config config;
        Horde.Check(Horde.horde_config_default(out config), "horde_config_default");
        config.seed = 7;
        config.threads = 2;
        IntPtr sim;
        Horde.Check(Horde.horde_sim_create(W, H, terrain, (UIntPtr)terrain.Length, ref config, out sim), "horde_sim_create");

        ushort a, b;
        var goalA = Rect(110, 20, 5, 5);
        var goalB = Rect(110, 70, 5, 5);
        Horde.Check(Horde.horde_add_group(sim, goalA, (UIntPtr)goalA.Length, out a), "horde_add_group");
        Horde.Check(Horde.horde_add_group(sim, goalB, (UIntPtr)goalB.Length, out b), "horde_add_group");

        var specs = new Horde.UnitSpec[2 * PerGroup];
        for (int i = 0; i < specs.Length; i++)
        {
            int k = i % PerGroup;
            Horde.Check(Horde.horde_unit_spec_default(out specs[i]), "horde_unit_spec_default");
            specs[i].x = 4.5f + (float)(k % 50);
            specs[i].y = (i < PerGroup ? 4.5f : 50.5f) + (float)(k / 50);
            specs[i].radius = 0.4f;
            specs[i].group = i < PerGroup ? a : b;
        }
        var ids = new uint[specs.Length];
        UIntPtr spawned;
        Horde.Check(Horde.horde_spawn(sim, specs, (UIntPtr)specs.Length, ids, out spawned), "horde_spawn");
        Expect(spawned.ToUInt64() == (ulong)specs.Length && ids[specs.Length - 1] == (uint)(specs.Length - 1), "spawned ids");

        Steps(sim, 60);
        Horde.ForceField blast;
        Horde.Check(Horde.horde_force_field_default(out blast), "horde_force_field_default");
        blast.kind = Horde.ForceExplosion;
        blast.x = 30f; blast.y = 18f; blast.radius = 10f; blast.strength = 600f; blast.duration = 0.25f;
        ulong blastId;
        Horde.Check(Horde.horde_add_force(sim, ref blast, out blastId), "horde_add_force");
        Steps(sim, 60);

        var goalB2 = Rect(110, 40, 5, 5);
        Horde.Check(Horde.horde_set_group_goal(sim, b, goalB2, (UIntPtr)goalB2.Length), "horde_set_group_goal");
        Horde.Check(Horde.horde_set_terrain_rect(sim, 62, 40, 2, 4, Horde.TerrainBrickWall), "horde_set_terrain_rect");
        Horde.Check(Horde.horde_set_terrain(sim, 62, 20, Horde.TerrainEmpty), "horde_set_terrain");
        Horde.Check(Horde.horde_set_terrain(sim, 63, 20, Horde.TerrainEmpty), "horde_set_terrain");
        var dead = new uint[100];
        for (uint i = 0; i < 100; i++) dead[i] = i * 10;
        Horde.Check(Horde.horde_despawn(sim, dead, (UIntPtr)dead.Length), "horde_despawn");
        Expect(Horde.horde_despawn(sim, dead, (UIntPtr)1) == Horde.ErrorNoSuchUnit, "a unit removed twice is refused");
        Steps(sim, 180);

        UIntPtr count;
        Horde.Check(Horde.horde_unit_count(sim, out count), "horde_unit_count");
        var units = new Horde.Unit[(int)count.ToUInt64()];
        UIntPtr read;
        Horde.Check(Horde.horde_read_units(sim, units, (UIntPtr)units.Length, out read), "horde_read_units");
        var xy = new float[2 * units.Length];
        Horde.Check(Horde.horde_read_positions(sim, xy, (UIntPtr)units.Length, out read), "horde_read_positions");
        Expect(units.Length == 2 * PerGroup - 100, "unit count");
        for (int i = 0; i < units.Length; i++)
        {
            var u = units[i];
            Expect(i == 0 || units[i - 1].id < u.id, "id order");
            Expect(u.group == (u.id < PerGroup ? a : b), "groups");
            Expect(u.x > 0 && u.x < W && u.y > 0 && u.y < H, "inside the map");
            Expect((u.flags & Horde.UnitQuarantined) == 0, "not quarantined");
            Expect(xy[2 * i] == u.x && xy[2 * i + 1] == u.y, "positions as read_units");
        }

        ulong hash = Hash(sim);
        if (hash != expected)
        {
            Console.Error.WriteLine("FAIL: state hash {0:x16}, the Rust Simulation's is {1:x16}", hash, expected);
            return 1;
        }

        UIntPtr size, written;
        Horde.Check(Horde.horde_snapshot_size(sim, out size), "horde_snapshot_size");
        var snapshot = new byte[(int)size.ToUInt64()];
        Expect(Horde.horde_snapshot_write(sim, snapshot, (UIntPtr)(snapshot.Length - 1), out written) == Horde.ErrorBufferTooSmall, "a small buffer is refused");
        Horde.Check(Horde.horde_snapshot_write(sim, snapshot, (UIntPtr)snapshot.Length, out written), "horde_snapshot_write");
        IntPtr copy;
        Horde.Check(Horde.horde_sim_create_from_snapshot(snapshot, (UIntPtr)snapshot.Length, 1, out copy), "horde_sim_create_from_snapshot");
        Expect(Hash(copy) == hash, "the copy's hash");
        Steps(sim, 30);
        Steps(copy, 30);
        ulong later = Hash(sim);
        Expect(Hash(copy) == later && later != hash, "both go on alike");
        Horde.Check(Horde.horde_snapshot_restore(sim, snapshot, (UIntPtr)snapshot.Length), "horde_snapshot_restore");
        Expect(Hash(sim) == hash, "restored in place");
        snapshot[snapshot.Length / 2] ^= 0x5a;
        Expect(Horde.horde_snapshot_restore(sim, snapshot, (UIntPtr)snapshot.Length) == Horde.ErrorSnapshot, "bad bytes refused");

        Horde.Check(Horde.horde_sim_free(copy), "horde_sim_free");
        Horde.Check(Horde.horde_sim_free(sim), "horde_sim_free");
        Console.WriteLine("horde C# example OK: {0} units, frame 300 hash {1:x16} (= Rust), snapshot {2} bytes restored twice", units.Length, hash, snapshot.Length);
        return 0;
    }
}
