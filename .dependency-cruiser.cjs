/**
 * The layering rule of src/, checked by `npm test` (scripts/test.js runs `depcruise` first).
 *
 * Each layer may import only from the layers listed before it (and from its own folder); never from
 * a later one, and never from a sibling on the same line. docs/architecture.md draws the same list.
 * TypeScript is parsed with swc (the TypeScript 7 compiler has no JavaScript API that
 * dependency-cruiser can use), so type-only imports count like any other.
 */
'use strict';

/** Bottom first. Folders on one line are siblings: neither imports the other. */
const LAYERS = [
  ['core'],
  ['model'],
  ['config'],
  ['log', 'metrics'],
  ['store', 'yarn'],
  // The Flink JobManager's REST client: it speaks HTTP with yarn's helpers (deadlines, answer bounds).
  ['flink'],
  ['sync'],
  // Implements ports the lower layers declare (yarn/rm-auth's RmAuthenticator with Kerberos);
  // below detect, which may need the same credentials for Flink's REST API.
  ['security'],
  ['detect'],
  ['api'],
  ['sidecar'],
  ['quickstart', 'sim'],
  ['cli'],
];

// An optional dependency may be absent (npm skips it when it cannot build: `kerberos` without
// libkrb5-dev), and the code that loads it says so at run time; its import is not a broken one.
const optional = Object.keys(require('./package.json').optionalDependencies ?? {});
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const rank = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i])));
const alt = (folders) => `(${folders.join('|')})`;

const upward = LAYERS.flatMap((folders, i) => {
  const notBelow = LAYERS.slice(i).flat();
  return folders.map((f) => {
    const forbidden = notBelow.filter((g) => g !== f && !(f === 'quickstart' && g === 'sim'));
    return {
      name: `layer-${f}`,
      severity: 'error',
      comment: `src/${f}/ may import only ${LAYERS.slice(0, i).flat().join(', ') || 'nothing else in src/'} (layers below it)`,
      from: { path: `^src/${f}/` },
      to: { path: `^src/${alt(forbidden)}/` },
    };
  });
});

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'sim-is-a-separate-program',
      severity: 'error',
      comment: 'the YARN simulator stands for YARN (and Flink): it may use core, model and the YARN and Flink wire types, nothing of the sidecar',
      from: { path: '^src/sim/' },
      to: { path: '^src/', pathNot: '^src/(core|model|yarn|flink|sim)/' },
    },
    {
      name: 'only-quickstart-and-cli-start-the-simulator',
      severity: 'error',
      comment: 'nothing in the product imports the simulator, except quickstart (which wires one up) and the CLI',
      from: { path: '^src/', pathNot: '^src/(sim|quickstart|cli)/' },
      to: { path: '^src/sim/' },
    },
    {
      name: 'product-does-not-import-tests',
      severity: 'error',
      comment: 'src/ is shipped; test/ and bench/ are not',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'product-does-not-use-dev-dependencies',
      severity: 'error',
      comment: 'the image installs production dependencies only',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'an import that resolves to nothing (optional dependencies excepted: they may be absent)',
      from: {},
      to: { couldNotResolve: true, ...(optional.length ? { pathNot: `^${alt(optional.map(escape))}$` } : {}) },
    },
    {
      name: 'known-layer',
      severity: 'error',
      comment: `every folder of src/ has a place in the layer list (.dependency-cruiser.cjs): ${[...rank.keys()].join(', ')}`,
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: `^src/${alt([...rank.keys()])}/` },
    },
  ],
  options: {
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    moduleSystems: ['cjs', 'es6'],
  },
};
