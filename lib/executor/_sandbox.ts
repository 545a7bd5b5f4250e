/**
 * Bubblewrap (`bwrap`) sandboxes: finding a working `bwrap`, and the
 * command line that confines a process to the workspace.
 *
 * The sandbox gets new user, PID, IPC, UTS, cgroup and network namespaces
 * (`--unshare-all`), no capabilities, its own session, and dies with its
 * parent. Its file system is built from nothing: the system directories
 * (`/usr` and the `/bin`, `/lib` … links into it) and a handful of files of
 * `/etc` read-only, a private `/tmp` that is also `$HOME`, a minimal `/dev`
 * and `/proc` of its own PID namespace, then the workspace read-write with
 * `.git` and the protected files bound read-only on top. Nothing else of the
 * host exists inside: not the user's home, not the workspace's siblings.
 *
 * @module
 */

/** The `/etc` entries a sandboxed program may need (loader, users, TLS, DNS). */
const ETC_ENTRIES = [
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "alternatives",
  "passwd",
  "group",
  "nsswitch.conf",
  "localtime",
  "hosts",
  "host.conf",
  "resolv.conf",
  "gai.conf",
  "ssl",
  "ca-certificates",
  "ca-certificates.conf",
  "mime.types",
];
const TOP_LINKS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/**
 * The isolation flags every sandbox starts with (`--share-net` after them
 * gives the network back where a sandbox needs it).
 */
export const ISOLATION_ARGS: readonly string[] = [
  "--unshare-all",
  "--die-with-parent",
  "--new-session",
  "--cap-drop",
  "ALL",
];

/** The `PATH` inside a sandbox. */
export const SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/** What to mount in a sandbox beside the system directories. */
export interface SandboxSpec {
  /** Real path of the workspace, bound read-write at the same path. */
  readonly workspace: string;
  /** Absolute paths inside the workspace bound read-only over it. */
  readonly readOnlyInside: readonly string[];
  /** Absolute host paths (files) bound read-only at the same path. */
  readonly hostFiles: readonly string[];
  /** Keep the host's network namespace. */
  readonly network: boolean;
}

const probed = new Map<string, Promise<boolean>>();

/**
 * Whether `program` can build a sandbox here: runs `true` inside the same
 * kind of sandbox once per program and remembers the answer.
 */
export function bwrapWorks(program: string): Promise<boolean> {
  let known = probed.get(program);
  if (known === undefined) {
    known = probe(program);
    probed.set(program, known);
  }
  return known;
}

async function probe(program: string): Promise<boolean> {
  try {
    const { success } = await new Deno.Command(program, {
      args: [...systemArgs(false), "--", "true"],
      clearEnv: true,
      env: { PATH: SANDBOX_PATH },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return success;
  } catch {
    return false;
  }
}

/** The `bwrap` arguments (before `--`) of a sandbox confined to the workspace. */
export function bwrapArgs(spec: SandboxSpec): string[] {
  const args = systemArgs(spec.network);
  for (const file of spec.hostFiles) args.push("--ro-bind", file, file);
  args.push("--bind", spec.workspace, spec.workspace);
  for (const path of spec.readOnlyInside) args.push("--ro-bind", path, path);
  args.push("--chdir", spec.workspace);
  return args;
}

function systemArgs(network: boolean): string[] {
  const args = [
    ...ISOLATION_ARGS,
    ...(network ? ["--share-net"] : []),
    "--ro-bind",
    "/usr",
    "/usr",
  ];
  for (const name of TOP_LINKS) {
    const path = `/${name}`;
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(path);
    } catch {
      continue;
    }
    if (info.isSymlink) args.push("--symlink", Deno.readLinkSync(path), path);
    else if (info.isDirectory) args.push("--ro-bind", path, path);
  }
  for (const name of ETC_ENTRIES) {
    args.push("--ro-bind-try", `/etc/${name}`, `/etc/${name}`);
  }
  args.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
  return args;
}
