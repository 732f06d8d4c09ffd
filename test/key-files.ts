/**
 * @module Shared helpers of the key-file tests: a temporary folder of key files, and
 * `aov keys seal-*` run as an operator would, with KEY_ENCRYPTION_KEY set to a fresh KEK.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { vi } from 'vitest';
import { createMemoryIO } from '../src/cli/io.js';
import { run as keysCli } from '../src/cli/keys.js';

/** A temporary folder (`dir`, also a data directory) and `file(text)`, a new key file in it readable by its owner only. */
export function createKeyFiles(prefix: string): { dir: string; file(text: string): string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return {
    dir,
    file(text) {
      const f = path.join(dir, `key-${randomBytes(6).toString('hex')}`);
      writeFileSync(f, text, { mode: 0o600 });
      return f;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * `aov keys <action> --key-file KEY_FILE --data-dir DIR` with KEY_ENCRYPTION_KEY stubbed to a fresh KEK
 * (the caller unstubs it after each test): its exit code, the KEK, and the I/O it wrote (the sealed key is
 * its standard output), on which the caller may run the CLI again.
 */
export async function sealWithKeysCli(action: 'seal-fee-payer' | 'seal-validator-key', keyFile: string, dataDir: string) {
  const kek = randomBytes(32);
  const io = createMemoryIO();
  vi.stubEnv('KEY_ENCRYPTION_KEY', kek.toString('hex'));
  const code = await keysCli([action, '--key-file', keyFile, '--data-dir', dataDir], io);
  return { code, kek, io };
}
