// Writes FILE.br beside each FILE: brotli at its highest quality, which
// browsers take over HTTP(S) when they say `br` (the server picks it).
//   node scripts/brotli.mjs FILE [FILE ...]
import { readFileSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';

for (const file of process.argv.slice(2)) {
  const bytes = readFileSync(file);
  const compressed = brotliCompressSync(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    },
  });
  writeFileSync(`${file}.br`, compressed);
}
