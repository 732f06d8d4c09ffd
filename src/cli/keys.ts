/**
 * @module `aov keys generate | list | rotate [--data-dir D]`: manage the
 * service's Ed25519 signing keys in `<data-dir>/keys` (SPEC §5.3, §7). Prints
 * public information only; private keys never leave their files.
 */
import path from 'node:path';
import type { CliIO } from './io.js';
import { createKeyRing } from '../receipts/key-ring.js';

const USAGE = `usage: aov keys <generate|list|rotate> [--data-dir DIR]

  generate   create the first signing key if there is none; print the active key
  list       print every key ever used (JSON array of public key info)
  rotate     add a new active key and retire the current one (kept for verification)

  --data-dir DIR   data directory (default ./data); keys live in DIR/keys
`;

export async function run(argv: string[], io: CliIO): Promise<number> {
  let action: string | undefined;
  let dataDir = './data';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      io.stdout(USAGE);
      return 0;
    } else if (a === '--data-dir' || a.startsWith('--data-dir=')) {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (!v) return usageError(io, '--data-dir needs a directory');
      dataDir = v;
    } else if (!a.startsWith('-') && action === undefined) {
      action = a;
    } else {
      return usageError(io, `unexpected argument '${a}'`);
    }
  }
  if (!action) return usageError(io, 'missing action');
  const ring = createKeyRing({ dir: path.join(dataDir, 'keys') });
  try {
    switch (action) {
      case 'generate': {
        const existing = ring.list().some((k) => k.status === 'active');
        const info = ring.active();
        if (existing) io.stderr(`aov keys: an active key already exists (${info.keyVersion}); use 'aov keys rotate' for a new one\n`);
        io.stdout(`${JSON.stringify(info, null, 2)}\n`);
        return 0;
      }
      case 'list':
        io.stdout(`${JSON.stringify(ring.list(), null, 2)}\n`);
        return 0;
      case 'rotate':
        io.stdout(`${JSON.stringify(ring.rotate(), null, 2)}\n`);
        return 0;
      default:
        return usageError(io, `unknown action '${action}'`);
    }
  } catch (e) {
    io.stderr(`aov keys: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
}

function usageError(io: CliIO, message: string): number {
  io.stderr(`aov keys: ${message}\n${USAGE}`);
  return 2;
}
