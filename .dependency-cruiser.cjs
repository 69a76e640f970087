/* global module */
/**
 * The import graph must be the layering of docs/architecture.md: HTTP edge → cutover stage →
 * adapters (src/wire) → core (TaskService) → stores, queue and upstream gateway, with
 * observability listening beside them. `npm run deps` checks it; `npm run check` runs that.
 *
 * A rule whose name ends in `-pending` is a `warn` that lists, file by file, the imports of the
 * tree that still break the rule of the same name without the suffix (which is an `error` for
 * every other file). When those imports are gone, delete the `-pending` rule and its file list
 * from the `pathNot` of the error rule.
 */


/** Where an upstream client may be built: the gateway, the client helper (its own package), and the benchmarks' load generators. */
const UPSTREAM_CLIENT_HOMES = ['^src/upstream/', '^packages/client/', '^bench/', '^test/'];
const UPSTREAM_CLIENTS = ['(^|/)node_modules/undici/', '(^|/)node_modules/@modelcontextprotocol/sdk/dist/[^/]+/client/'];

const TYPE_ONLY = ['type-only'];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only ones included: a cycle means two modules are one job or a layer points up.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-is-neutral',
      comment:
        'The core knows no wire, edge, cutover, observability, session, queue or upstream module: they reach it through its ports (src/core/ports.ts).',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/(wire|http|cutover|observe|session|execution|upstream|config|cli|shim[.]ts)' },
    },
    {
      name: 'stores-below-core',
      comment: 'Task and session stores serve the core; they know no adapter, edge, queue, upstream or observability module.',
      severity: 'error',
      from: { path: '^src/(store|session)/' },
      to: { path: '^src/(wire|http|cutover|observe|execution|upstream|config|cli|shim[.]ts)' },
    },
    {
      name: 'execution-below-adapters',
      comment: 'Workers run tasks through the core; they know no adapter, edge, cutover or observability module.',
      severity: 'error',
      from: { path: '^src/execution/' },
      to: { path: '^src/(wire|http|cutover|observe|cli|shim[.]ts)' },
    },
    {
      name: 'upstream-below-core',
      comment: 'The upstream gateway is reached by the core and the workers; it knows no adapter, store or edge module.',
      severity: 'error',
      from: { path: '^src/upstream/' },
      to: {
        path: '^src/(wire|http|cutover|observe|store|session|execution|cli|shim[.]ts)',
        // The shim is a SEP-2663 client of a 2026-07-28 upstream: it speaks that wire from the
        // same schema and header modules the adapter serves it with.
        pathNot: '^src/wire/sep2663/(constants|schemas|result-schemas|headers|header-value)[.]ts$',
      },
    },
    {
      name: 'wire-not-to-store',
      comment: 'Adapters talk to the core (TaskService) only: the core is the only door to the task store.',
      severity: 'error',
      from: { path: '^src/wire/' },
      to: { path: '^src/store/' },
    },
    {
      name: 'wire-not-to-session-implementations',
      comment:
        'The legacy adapter uses the SessionStore interface (sessions are a legacy-wire concern, docs/architecture.md); never an implementation or its scripts.',
      severity: 'error',
      from: { path: '^src/wire/' },
      to: { path: '^src/session/', pathNot: '^src/session/session-store[.]ts$' },
    },
    {
      name: 'adapters-not-to-execution',
      comment: 'Adapters reach the queue and the workers through the core only.',
      severity: 'error',
      from: { path: '^src/wire/' },
      to: { path: '^src/(execution|cutover|observe|cli|shim[.]ts)' },
    },
    {
      name: 'wire-writes-no-socket',
      comment:
        'An adapter returns a Reply; the HTTP edge writes it. The contract (WireRequest, Reply) lives in src/wire, so no adapter imports src/http at all (docs/decisions/0025-one-adapter-contract.md).',
      severity: 'error',
      from: { path: '^src/wire/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'cutover-before-adapters',
      comment: 'The cutover stage runs before any adapter and reads only the message: it imports no adapter.',
      severity: 'error',
      from: { path: '^src/cutover/' },
      to: { path: '^src/(wire/(sep2663|legacy)/|store/|session/|execution/|upstream/|observe/)' },
    },
    {
      name: 'observe-changes-nothing',
      comment:
        'Observability listens and refuses nothing: it may read the cutover and HTTP types it reports on, never call the cutover stage or an HTTP writer.',
      severity: 'error',
      from: { path: '^src/observe/' },
      to: { path: '^src/(cutover|http)/', dependencyTypesNot: TYPE_ONLY },
    },
    {
      name: 'upstream-only-through-gateway',
      comment: 'The upstream is reached only through src/upstream: no other module builds an undici or MCP SDK client.',
      severity: 'error',
      from: { pathNot: UPSTREAM_CLIENT_HOMES },
      to: { path: UPSTREAM_CLIENTS },
    },
    {
      name: 'redis-only-in-redis-modules',
      comment: 'Only the Redis connection code imports ioredis; every other Redis user goes through src/store/redis/connection.ts.',
      severity: 'error',
      from: { pathNot: ['^src/store/redis/', '^bench/'] },
      to: { path: '(^|/)node_modules/ioredis/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default', 'types'],
      extensions: ['.ts', '.js'],
    },
  },
};
