// Compiles contracts/src/*.sol with the pinned solc-js and writes one artifact
// per deployable contract to contracts/build/<Name>.json.
//
//   node build.mjs           compile and write the artifacts
//   node build.mjs --check   compile in memory; exit 1 if the committed artifacts differ
//
// The output is byte-identical on any clone: source unit names are relative
// ("src/AdVault.sol", "@openzeppelin/..."), the metadata hash is left out of
// the bytecode, and the EVM version is pinned rather than left to the
// compiler's default.

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const ROOT = dirname(fileURLToPath(import.meta.url));
const SRC_DIR = "src";
const BUILD_DIR = join(ROOT, "build");
const NODE_MODULES = join(ROOT, "node_modules");

const EVM_VERSION = "cancun";
const OPTIMIZER = { enabled: true, runs: 200 };

function sourceUnits() {
  const files = readdirSync(join(ROOT, SRC_DIR))
    .filter((name) => name.endsWith(".sol"))
    .sort();
  const sources = {};
  for (const name of files) {
    const unit = `${SRC_DIR}/${name}`;
    sources[unit] = { content: readFileSync(join(ROOT, unit), "utf8") };
  }
  return sources;
}

// Resolves imports that are not among the sources: package imports from
// node_modules, anything else relative to the contracts directory.
function findImports(unit) {
  for (const base of [NODE_MODULES, ROOT]) {
    const file = join(base, unit);
    if (existsSync(file)) return { contents: readFileSync(file, "utf8") };
  }
  return { error: `import not found: ${unit}` };
}

function compile() {
  const sources = sourceUnits();
  const input = {
    language: "Solidity",
    sources,
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: OPTIMIZER,
      metadata: { bytecodeHash: "none" },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));

  let failed = false;
  for (const diagnostic of output.errors ?? []) {
    console.error(diagnostic.formattedMessage ?? diagnostic.message);
    if (diagnostic.severity === "error") failed = true;
  }
  if (failed) {
    console.error("compilation failed");
    process.exit(1);
  }

  const compiler = { version: solc.version(), evmVersion: EVM_VERSION, optimizer: OPTIMIZER };
  const artifacts = new Map();
  for (const unit of Object.keys(sources)) {
    for (const [contractName, contract] of Object.entries(output.contracts[unit] ?? {})) {
      const bytecode = contract.evm.bytecode.object;
      if (!bytecode) continue; // abstract contracts and interfaces
      if (artifacts.has(contractName)) {
        console.error(`duplicate contract name: ${contractName}`);
        process.exit(1);
      }
      const artifact = { contractName, abi: contract.abi, bytecode: `0x${bytecode}`, compiler };
      artifacts.set(contractName, `${JSON.stringify(artifact, null, 2)}\n`);
    }
  }
  return artifacts;
}

function check(artifacts) {
  const stale = [];
  for (const [contractName, text] of artifacts) {
    const file = join(BUILD_DIR, `${contractName}.json`);
    if (!existsSync(file)) stale.push(`build/${contractName}.json is missing`);
    else if (readFileSync(file, "utf8") !== text) stale.push(`build/${contractName}.json differs`);
  }
  const existing = existsSync(BUILD_DIR) ? readdirSync(BUILD_DIR).filter((name) => name.endsWith(".json")) : [];
  for (const name of existing.sort()) {
    if (!artifacts.has(name.slice(0, -".json".length))) stale.push(`build/${name} has no contract in ${SRC_DIR}/`);
  }
  if (stale.length > 0) {
    for (const line of stale) console.error(line);
    console.error("artifacts are out of date: run `node build.mjs` in contracts/");
    process.exit(1);
  }
  console.log(`artifacts up to date (${artifacts.size} contracts, solc ${solc.version()})`);
}

function write(artifacts) {
  mkdirSync(BUILD_DIR, { recursive: true });
  for (const [contractName, text] of artifacts) {
    writeFileSync(join(BUILD_DIR, `${contractName}.json`), text);
    console.log(`wrote build/${contractName}.json`);
  }
}

const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg !== "--check");
if (unknown.length > 0) {
  console.error(`unknown argument: ${unknown.join(" ")}\nusage: node build.mjs [--check]`);
  process.exit(2);
}

const artifacts = compile();
if (args.includes("--check")) check(artifacts);
else write(artifacts);
