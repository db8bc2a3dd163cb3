// Bundle entry.js into dist/prebid.js with esbuild. prebid.js from npm ships its modules precompiled (dist/src), so
// a bundler needs no Babel set-up; an adapter written for Prebid's own tree imports '../src/…' and
// '../libraries/…', which are resolved here to the package's precompiled files, the very modules Prebid's core uses.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const prebidTree = join(here, 'node_modules', 'prebid.js', 'dist', 'src');

const prebidTreeImports = {
  name: 'prebid-tree-imports',
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/(src|libraries)\// }, (args) => (
      args.importer.includes(`${join('node_modules', 'prebid.js')}`) ? undefined
        : { path: join(prebidTree, args.path.slice(3)) }));
  }
};

await build({
  entryPoints: [join(here, 'entry.js')],
  outfile: join(here, 'dist', 'prebid.js'),
  bundle: true,
  format: 'iife',
  target: 'es2020',
  logLevel: 'warning',
  plugins: [prebidTreeImports]
});
