/**
 * Part of the executor's worker (see `_worker.ts`): the survey of the
 * workspace — the tree listed from its directories, its files described
 * and hashed where their stat changed (git's racy-timestamp rule), large
 * trees shared out to helper workers that read the workspace only — and
 * the helpers' side of it.
 *
 * Like all of the worker, {@linkcode workerSurvey} must stay self-contained
 * (it is shipped as source text): only type imports, nothing referenced
 * from outside the function but its parameters and the runtime's globals.
 *
 * @module
 */
import type {
  DescribeMessage,
  DescribeReply,
  Reply,
  SurveyReply,
} from "./_protocol.ts";
import type {
  Cached,
  ListedDir,
  WorkerFiles,
  WorkerScope,
  WorkerState,
} from "./_worker_files.ts";

/** The survey and the helpers, over the state the worker's parts share. */
// deno-lint-ignore explicit-function-return-type
export function workerSurvey(
  files: WorkerFiles,
  state: WorkerState,
  scope: WorkerScope,
) {
  const {
    statKey,
    sameStat,
    settled,
    fail,
    resolve,
    dirname,
    inside,
    requireConfig,
    nodeFs,
    openQuick,
  } = files;

  /** The entries of the tree, in digest order (see {@linkcode listTree}). */
  interface Listing {
    /** One character per entry: `l` a finished line, `e` a path to describe. */
    kinds: string[];
    /** The finished line, or the workspace-relative path. */
    values: string[];
  }

  /**
   * Lists the tree (not following symlinks, `.git` aside) from the
   * directories' entries alone: a directory becomes its digest line and its
   * own entries, anything else a path to describe (by
   * {@linkcode describe}). A directory is read again only when its stat
   * differs from the one remembered with its entries, or the remembered
   * times were not safely older than the survey that read it: adding,
   * removing or renaming an entry sets the directory's mtime and ctime, and
   * ctime cannot be set back. Otherwise it costs its `lstat`.
   */
  function listTree(
    workspace: string,
    before: number,
    beat: () => void,
  ): Listing {
    const kinds: string[] = [];
    const values: string[] = [];
    const next = new Map<string, ListedDir>();
    function entriesOf(dir: string, prefix: string): ListedDir {
      const info = Deno.lstatSync(dir);
      if (!info.isDirectory) {
        throw fail("not_a_directory", "Replaced after its parent was read");
      }
      const known = state.listed.get(prefix);
      if (known !== undefined && known.clean && sameStat(known, info)) {
        return known;
      }
      const entries: Deno.DirEntry[] = [];
      for (const entry of Deno.readDirSync(dir)) entries.push(entry);
      entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      return {
        ...statKey(info),
        clean: settled(info, before),
        names: entries.map((entry) => entry.name),
        dirs: entries.map((entry) => entry.isDirectory),
      };
    }
    function walk(dir: string, prefix: string): void {
      let entries: ListedDir;
      try {
        entries = entriesOf(dir, prefix);
      } catch {
        // Gone or replaced while walking: the digest says so, nothing more.
        kinds.push("l");
        values.push(`? ${JSON.stringify(prefix)}`);
        return;
      }
      next.set(prefix, entries);
      const { names, dirs } = entries;
      for (let at = 0; at < names.length; at++) {
        const name = names[at] as string;
        if (prefix === "" && name === ".git") continue;
        const rel = prefix + name;
        if (dirs[at]) {
          kinds.push("l");
          values.push(`d ${JSON.stringify(rel)}`);
          walk(dir + "/" + name, rel + "/");
        } else {
          kinds.push("e");
          values.push(rel);
        }
        if ((values.length & 1023) === 0) beat();
      }
    }
    walk(workspace, "");
    state.listed = next;
    return { kinds, values };
  }

  /** What describing a share of the entries found. */
  interface Described {
    lines: string[];
    escapes: string[];
    links: [string, number, string][];
    hashed: number;
  }

  /**
   * Describes the entries `from` to `to` of a listing with synchronous
   * calls: a regular file's contents are read and hashed only when its stat
   * differs from the one remembered with its hash — path, size, mtime,
   * ctime, inode, device and mode — or when the remembered times were not
   * safely older than the survey that hashed it (git's racy-timestamp
   * rule). ctime is set by the kernel on every change of contents, mode or
   * name and cannot be set back without changing the system clock, so a
   * file rewritten with its mtime restored is hashed again. A file whose
   * stat matches costs its `lstat` and nothing more: its whole digest line
   * is remembered with it. What is remembered goes into `next`.
   */
  function describe(
    listing: Listing,
    from: number,
    to: number,
    before: number,
    next: Map<string, Cached>,
    beat: () => void,
  ): Described {
    const { workspace, digestFileBytes } = requireConfig();
    const api = nodeFs();
    const hasher = state.nodeCrypto;
    if (hasher === undefined) throw fail("not_initialized", "No hash yet");
    const found: Described = { lines: [], escapes: [], links: [], hashed: 0 };
    function contentSum(full: string, info: Deno.FileInfo): string {
      if (info.size > digestFileBytes) {
        return `large:${info.size}:${info.mtime?.getTime() ?? 0}:${
          info.ctime?.getTime() ?? 0
        }:${info.ino}`;
      }
      // No fstat here (it is slow through node:fs, and a survey opens every
      // file): lstat said regular, and the open and reads cannot block. The
      // size lstat gave is read and no more, without a read to see the end:
      // a file changed after that stat has a later stat, so the next survey
      // reads it again.
      const fd = openQuick(full);
      try {
        const bytes = new Uint8Array(info.size);
        let total = 0;
        while (total < bytes.length) {
          const read = api.readSync(
            fd,
            bytes,
            total,
            bytes.length - total,
            null,
          );
          if (read === 0) break;
          total += read;
        }
        found.hashed += 1;
        return hasher!.createHash("sha256").update(bytes.subarray(0, total))
          .digest("hex");
      } finally {
        api.closeSync(fd);
      }
    }
    /** The digest line of a regular file: remembered, or read and hashed. */
    function fileLine(full: string, rel: string, info: Deno.FileInfo): string {
      const known = state.cache.get(rel);
      if (known !== undefined && known.clean && sameStat(known, info)) {
        next.set(rel, known);
        return known.line;
      }
      const sum = contentSum(full, info);
      const line = `f ${JSON.stringify(rel)} ${
        (info.mode ?? 0) & 0o111 ? "x" : "-"
      } ${sum}`;
      next.set(rel, { ...statKey(info), line, clean: settled(info, before) });
      return line;
    }
    function entryLine(rel: string): string {
      const full = workspace + "/" + rel;
      const info = Deno.lstatSync(full);
      if (info.isFile) {
        if ((info.nlink ?? 1) > 1) {
          found.links.push([`${info.dev}:${info.ino}`, info.nlink ?? 1, rel]);
        }
        return fileLine(full, rel, info);
      }
      if (info.isSymlink) {
        const target = Deno.readLinkSync(full);
        let escaped = !inside(resolve(dirname(full), target), workspace);
        try {
          escaped ||= !inside(Deno.realPathSync(full), workspace);
        } catch {
          // Dangling: judged by its text alone.
        }
        if (escaped) found.escapes.push(rel);
        return `l ${JSON.stringify(rel)} ${JSON.stringify(target)}`;
      }
      // A directory here was put in place after its parent was listed.
      if (info.isDirectory) return `? ${JSON.stringify(rel)}`;
      // FIFOs, sockets, devices: never opened.
      return `o ${JSON.stringify(rel)}`;
    }
    const { kinds, values } = listing;
    for (let at = from; at < to; at++) {
      const value = values[at] as string;
      if (kinds[at] === "l") {
        found.lines.push(value);
        continue;
      }
      try {
        found.lines.push(entryLine(value));
      } catch {
        found.lines.push(`? ${JSON.stringify(value)}`);
      }
      if ((at & 255) === 0) beat();
    }
    return found;
  }

  /** A survey helper: a worker beside this one, reading the workspace only. */
  interface Helper {
    port: MessagePort;
    waiting: Map<number, (answer: unknown) => void>;
    broken: boolean;
  }
  /** The helpers, once asked for: kept for every later survey. */
  let helpers: Promise<Helper[]> | null = null;
  /** Takes the helpers' ports when whoever started this worker sends them. */
  let offered: ((ports: readonly MessagePort[]) => void) | null = null;
  let helperIds = 0;
  /** How long to wait for the helpers asked for before surveying alone. */
  const HELPERS_WAIT_MS = 5_000;

  function breakDown(helper: Helper): void {
    helper.broken = true;
    helper.port.close();
    for (const done of helper.waiting.values()) done(null);
    helper.waiting.clear();
  }

  /** Asks a helper; `null` when it failed or is broken. */
  function request(
    helper: Helper,
    message: { op: string; [key: string]: unknown },
  ): Promise<unknown> {
    if (helper.broken) return Promise.resolve(null);
    const id = ++helperIds;
    return new Promise((done) => {
      helper.waiting.set(id, done);
      helper.port.postMessage({ ...message, id });
    });
  }

  /** The survey under way, whose beats a helper's progress renews. */
  let surveying = 0;

  /**
   * A helper on `port`: it gets the configuration, and is kept only when
   * it reports exactly the permissions a helper holds (reading the
   * workspace, nothing else); otherwise it is broken from the start.
   */
  async function attach(port: MessagePort): Promise<Helper> {
    const { workspace, digestFileBytes } = requireConfig();
    const helper: Helper = { port, waiting: new Map(), broken: false };
    port.onmessage = (event: MessageEvent<Reply>) => {
      const reply = event.data;
      if ("alive" in reply) {
        // The helper's progress is the survey's: relayed, so a helper that
        // stops answering stops the beats and the executor's watchdog acts.
        scope.postMessage({ id: surveying, alive: true });
        return;
      }
      const done = helper.waiting.get(reply.id);
      if (done === undefined || !("ok" in reply)) return;
      helper.waiting.delete(reply.id);
      if (reply.ok) done(reply.value);
      else breakDown(helper);
    };
    const states = await request(helper, {
      op: "helper",
      workspace,
      digestFileBytes,
    }) as Record<string, string> | null;
    const exact = states !== null &&
      states["read:workspace"] === "granted" &&
      ["read", "write", "write:workspace", "run", "net", "env", "sys", "ffi"]
        .every((name) => states[name] !== "granted");
    if (!exact) breakDown(helper);
    return helper;
  }

  /**
   * The helpers, asked for on the first large survey: whoever started this
   * worker (the executor, or the relay inside bubblewrap) starts them beside
   * it — a worker started by a worker takes a second to boot — and sends a
   * port to each, in the order of their indices. Each describes a share of
   * every later survey and remembers the stats of its share.
   */
  function startHelpers(count: number): Promise<Helper[]> {
    if (helpers !== null) return helpers;
    helpers = new Promise<readonly MessagePort[]>((done) => {
      const timer = setTimeout(() => done([]), HELPERS_WAIT_MS);
      offered = (ports) => {
        clearTimeout(timer);
        offered = null;
        done(ports);
      };
      scope.postMessage({ id: surveying, spawn: count });
    }).then((ports) => Promise.all(ports.map(attach)));
    return helpers;
  }

  /** Asks a helper to describe a share; `null` when it cannot. */
  async function ask(
    helper: Helper,
    listing: Listing,
    from: number,
    to: number,
    before: number,
  ): Promise<DescribeReply | null> {
    return await request(helper, {
      op: "describe",
      kinds: listing.kinds.slice(from, to).join(""),
      values: listing.values.slice(from, to).join("\0"),
      before,
    }) as DescribeReply | null;
  }

  /** A helper's answer to a `describe`, over its own share and cache. */
  function describeShare(
    message: DescribeMessage,
    beat: () => void,
  ): DescribeReply {
    const listing = {
      kinds: message.kinds.split(""),
      values: message.kinds === "" ? [] : message.values.split("\0"),
    };
    const next = new Map<string, Cached>();
    const found = describe(
      listing,
      0,
      listing.kinds.length,
      message.before,
      next,
      beat,
    );
    state.cache = next;
    return {
      text: found.lines.join("\n"),
      count: found.lines.length,
      escapes: found.escapes,
      links: found.links,
      hashed: found.hashed,
    };
  }

  /**
   * Surveys the tree: lists it, then describes its entries — a large tree
   * in contiguous shares, one per helper (sent first) and one here, all at
   * once. Each worker keeps the stats of its share; an entry whose share
   * moves to another worker is read again there. A helper that fails
   * leaves its share to this worker. Sends an `alive` beat every second.
   */
  async function survey(id: number): Promise<SurveyReply> {
    const { workspace, surveyHelpers, surveySharedFrom } = requireConfig();
    const hasher = state.nodeCrypto;
    if (hasher === undefined) throw fail("not_initialized", "No hash yet");
    // Taken before every stat of this survey: one time for the whole
    // survey errs on the safe side of the racy rule.
    const before = Date.now();
    let last = before;
    const beat = () => {
      const now = Date.now();
      if (now - last >= 1000) {
        last = now;
        scope.postMessage({ id, alive: true });
      }
    };
    surveying = id;
    const listing = listTree(workspace, before, beat);
    const total = listing.kinds.length;
    const shared = surveyHelpers > 0 && total >= surveySharedFrom
      ? (await startHelpers(surveyHelpers)).filter((h) => !h.broken)
      : [];
    const shares = shared.length + 1;
    const bounds = Array.from(
      { length: shares + 1 },
      (_, k) => Math.floor((k * total) / shares),
    );
    const asked = shared.map((helper, k) =>
      ask(
        helper,
        listing,
        bounds[k + 1] as number,
        bounds[k + 2] as number,
        before,
      )
    );
    const next = new Map<string, Cached>();
    const parts: (Described | DescribeReply)[] = [
      describe(listing, 0, bounds[1] as number, before, next, beat),
    ];
    let helped = 0;
    for (const [k, pending] of asked.entries()) {
      const answer = await pending;
      if (answer !== null) helped += 1;
      parts.push(
        answer ?? describe(
          listing,
          bounds[k + 1] as number,
          bounds[k + 2] as number,
          before,
          next,
          beat,
        ),
      );
    }
    state.cache = next;
    const texts: string[] = [];
    const escapes: string[] = [];
    const links = new Map<string, { paths: string[]; nlink: number }>();
    let hashed = 0;
    for (const part of parts) {
      if ("lines" in part) {
        if (part.lines.length > 0) texts.push(part.lines.join("\n"));
      } else if (part.count > 0) texts.push(part.text);
      escapes.push(...part.escapes);
      for (const [key, nlink, path] of part.links) {
        const known = links.get(key) ?? { paths: [], nlink };
        known.paths.push(path);
        links.set(key, known);
      }
      hashed += part.hashed;
    }
    const externalLinks: string[] = [];
    for (const { paths, nlink } of links.values()) {
      if (paths.length < nlink) externalLinks.push(...paths);
    }
    const digest = hasher.createHash("sha256").update(texts.join("\n"))
      .digest("hex");
    return {
      digest,
      escapes,
      externalLinks: externalLinks.sort(),
      hashed,
      helpers: helped,
    };
  }

  /** Takes the helpers' ports whoever started this worker sent. */
  function takePorts(ports: readonly MessagePort[]): void {
    if (offered === null) {
      for (const port of ports) port.close();
    } else offered(ports);
  }

  /** Breaks the helper whoever started it saw fail. */
  function helperFailed(index: number): void {
    helpers?.then((known) => {
      const helper = known[index];
      if (helper !== undefined) breakDown(helper);
    });
  }

  return { survey, describeShare, takePorts, helperFailed };
}

/** What {@linkcode workerSurvey} gives the protocol. */
export type WorkerSurvey = ReturnType<typeof workerSurvey>;
