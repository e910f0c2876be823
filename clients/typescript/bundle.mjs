// The board page's copy of the package: src/index.ts and its dependencies as one minified ES
// module, written to the path given (`make bundle`: gateway/web/static/shikoku-client.js;
// tests/typescript/test_bundle.py: a file of its own, compared with the committed one).
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const [out] = process.argv.slice(2);
if (!out) throw new Error("usage: node bundle.mjs OUTFILE");

await build({
  entryPoints: [fileURLToPath(new URL("src/index.ts", import.meta.url))],
  outfile: out,
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: true,
  legalComments: "eof",
  logLevel: "warning",
  banner: { js: "// @shikoku/client (clients/typescript) as `make bundle` makes it: do not edit." },
});
