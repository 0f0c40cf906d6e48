// File modes of the data directory (issue 17 item 7): the directory Secbox creates is 0700; secbox.db, its
// -wal and -shm, and master.key are 0600 whatever the umask; looser existing files are tightened at start and
// the server says so in its log.
import { afterAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../config/load";
import { openRuntime } from "../boot";
import { createLogger } from "../log";

const root = mkdtempSync(join(tmpdir(), "secbox-modes-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const emptyFile = join(root, "empty.toml");
writeFileSync(emptyFile, "");

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

async function open(dataDir: string) {
  const lines: string[] = [];
  const rt = await openRuntime(loadConfig({ file: emptyFile, env: { SECBOX_SERVER_DATA_DIR: dataDir } }), {
    log: createLogger("warn", (l) => lines.push(l)),
  });
  // A write, so the WAL and shared-memory files exist.
  await rt.db.run("INSERT INTO server_state (key, value) VALUES ('mode-test', '1') ON CONFLICT (key) DO UPDATE SET value = '2'");
  return { rt, lines };
}

test("a fresh data directory: dir 0700, secbox.db, -wal, -shm and master.key 0600 (even with umask 000)", async () => {
  const dataDir = join(root, "fresh", "nested", "data");
  const previous = process.umask(0o000);
  try {
    const { rt, lines } = await open(dataDir);
    try {
      expect(mode(dataDir)).toBe("700");
      for (const f of ["secbox.db", "secbox.db-wal", "secbox.db-shm", "master.key"]) expect([f, mode(join(dataDir, f))]).toEqual([f, "600"]);
      expect(lines).toEqual([]);
    } finally {
      rt.close();
    }
  } finally {
    process.umask(previous);
  }
});

test("looser existing files are tightened to 0600 at start, each named in a warning", async () => {
  const dataDir = join(root, "loose");
  const first = await open(dataDir);
  const db = join(dataDir, "secbox.db");
  const key = join(dataDir, "master.key");
  // As an older Secbox (or a copy with default permissions) left them; a second process opens the directory
  // while the first still runs, so the -wal and -shm exist too.
  for (const f of [db, `${db}-wal`, `${db}-shm`]) chmodSync(f, 0o644);
  chmodSync(key, 0o640);
  const second = await open(dataDir);
  try {
    for (const f of [db, `${db}-wal`, `${db}-shm`, key]) expect([f, mode(f)]).toEqual([f, "600"]);
    for (const f of [db, `${db}-wal`, `${db}-shm`, key]) {
      const line = second.lines.find((l) => l.includes(JSON.stringify(f)));
      expect([f, line]).not.toEqual([f, undefined]);
      expect(line).toContain("WARN");
    }
    expect(second.lines.find((l) => l.includes(key))).toContain('"previousMode":"0640"');
    // An owner-only file is left alone and not reported.
    const third = await open(dataDir);
    third.rt.close();
    expect(third.lines).toEqual([]);
  } finally {
    second.rt.close();
    first.rt.close();
  }
  expect(existsSync(db)).toBe(true);
});
