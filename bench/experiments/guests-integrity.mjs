// The Karmem integrity experiment (§5.2.3) at scale (docs/guest-integrity.md): random
// schemas, a producer guest, a Rust and a C consumer guest (one fanout; C when zig is
// here) and the TS consumer on the host agree on the SHA-256 of every field path; mutated
// messages (bit flips, offsets out of bounds, backwards and at themselves, huge counts,
// lying headers, truncation) get the same answer from every consumer — a digest or a
// typed read error — and no crash or hang.
//
//   node bench/run.mjs guests-integrity [--quick] [--seed N] [--schemas N] [--malicious N] [--jobs N] [--no-c]
import { parseArgs } from 'node:util';
import { runIntegrity } from '../../tests/integrity/run.mjs';

export async function run(ctx) {
  const { values: flags } = parseArgs({
    args: ctx.argv,
    strict: false,
    options: {
      seed: { type: 'string' },
      schemas: { type: 'string' },
      malicious: { type: 'string' },
      jobs: { type: 'string' },
      'no-c': { type: 'boolean' },
    },
  });
  const params = {
    seed: Number(flags.seed ?? 2026),
    schemas: Number(flags.schemas ?? (ctx.quick ? 100 : 1000)),
    batchSize: ctx.quick ? 25 : 50,
    values: ctx.quick ? 3 : 4,
    malicious: Number(flags.malicious ?? (ctx.quick ? 100 : 1000)),
    timeout: 60_000,
    jobs: Number(flags.jobs ?? 1),
    cConsumer: !flags['no-c'],
  };
  const t0 = performance.now();
  const { stats, coverage, compileMs, built, runMs } = await runIntegrity({ ...params, log: ctx.progress });
  const wallMs = performance.now() - t0;

  const summary = [
    { what: 'random schemas', value: stats.schemas },
    { what: 'values (producer messages)', value: stats.values },
    {
      what: `field-path digests compared with the producer’s (${[...stats.consumers, 'TS'].join(' + ')} consumers)`,
      value: stats.pathsHashed,
    },
    {
      what: `malicious messages (each read by the ${stats.consumers.join(' and ')} guest(s) and the TS reader)`,
      value: stats.malicious,
    },
    ...stats.consumers.map((who) => ({
      what: `… answered by the ${who} consumer guest`,
      value: stats.maliciousByConsumer[who] ?? 0,
    })),
    { what: '… read by all, same digest', value: stats.maliciousRead },
    { what: '… refused by all with a typed read error', value: stats.maliciousRefused },
    {
      what: '… of which with another R code than the TS reader’s, summed over the guests (the readers check in another order)',
      value: Object.values(stats.differentCodes).reduce((a, b) => a + b, 0),
    },
    ...(stats.consumers.length > 1
      ? [{ what: '… of which with different R codes from one guest to another', value: stats.guestCodesDiffer }]
      : []),
    { what: 'mismatches', value: stats.mismatches },
    { what: 'crashes (guest traps, untyped errors)', value: stats.crashes },
    { what: 'hangs (calls past the timeout)', value: stats.hangs },
    { what: 'batch guests compiled in this run', value: built },
    { what: 'compile time (s)', value: compileMs / 1000 },
    { what: 'run time (s)', value: runMs / 1000 },
    { what: 'wall time, generation + compile + run (s)', value: wallMs / 1000 },
    { what: 'slowest TS read of a malicious message (ms)', value: stats.slowestTsReadMs },
  ];
  const kinds = Object.entries(stats.byKind).map(([kind, k]) => ({
    kind,
    messages: k.messages,
    refused: k.refused,
    read: k.messages - k.refused,
  }));
  const codes = Object.entries(stats.refusedByCode)
    .sort()
    .map(([code, count]) => ({ code, count }));
  return {
    title: 'Guests: the integrity experiment (random schemas, malicious producers)',
    params: {
      ...params,
      consumers: `${stats.consumers.map((c) => `${c} guest`).join(', ')} (one fanout, owned decode) and TS (generated decoder, host)${stats.cMissing ? `; no C guest: ${stats.cMissing}` : ''}`,
    },
    notes: [
      'Each schema is drawn by tests/integrity/gen-schemas.mjs from the seed (integers of every width, f32/f64, bool, enums, UTF-8 and UTF-16 strings, byte and scalar slices, fixed arrays, inline and dynamic structs nested and recursive, unions, slices of structs (SoA/AoS) and of unions (SoA/AoS/BoVoA/BoVoS)); a batch of schemas is one wasm32 guest, cached under target/integrity by content hash.',
      'Per value the producer guest draws a message from its entropy, writes it with the generated Rust writer and hashes every field path (canonical stringification, docs/guest-integrity.md); the Rust consumer guest and the TS consumer read it and hash it the same way; each path digest is compared with the producer’s.',
      'Malicious messages are mutants of those values (kinds below); every consumer must give the TS reader’s digest, or a typed read error when it does (R0001…R0011; the code may differ when a message breaks two rules and the readers check them in another order: counted below). A guest call that traps is a crash, one past its timeout a hang, a TS throw without an R code a crash.',
      ...stats.failures.map((f) => `Failure: ${f}`),
    ],
    tables: [
      {
        title: 'Summary',
        columns: [
          { key: 'what', label: 'What' },
          { key: 'value', label: 'Value', format: 'auto' },
        ],
        rows: summary,
      },
      {
        title: 'Language features: schemas using each',
        columns: [
          { key: 'feature', label: 'Feature' },
          { key: 'schemas', label: 'schemas', format: 'int' },
        ],
        rows: Object.entries(coverage)
          .sort()
          .map(([feature, schemas]) => ({ feature, schemas })),
      },
      {
        title: 'Malicious messages by mutation',
        columns: [
          { key: 'kind', label: 'Mutation' },
          { key: 'messages', label: 'messages', format: 'int' },
          { key: 'read', label: 'read (same digest)', format: 'int' },
          { key: 'refused', label: 'refused by all', format: 'int' },
        ],
        rows: kinds,
      },
      {
        title: 'Refused by all, with different R codes',
        columns: [
          { key: 'pair', label: 'TS reader, guest' },
          { key: 'count', label: 'messages', format: 'int' },
        ],
        rows: Object.entries(stats.differentCodes)
          .sort((a, b) => b[1] - a[1])
          .map(([pair, count]) => ({ pair, count })),
      },
      {
        title: 'Read errors of the refused messages (the TS reader’s code)',
        columns: [
          { key: 'code', label: 'Code' },
          { key: 'count', label: 'messages', format: 'int' },
        ],
        rows: codes,
      },
    ],
    charts: [
      {
        kind: 'bar',
        title: 'Malicious messages by mutation: read or refused, the same by every consumer',
        subtitle: `${stats.malicious.toLocaleString('en-US')} messages, ${stats.mismatches} mismatches, ${stats.crashes} crashes, ${stats.hangs} hangs`,
        x: { field: 'kind', label: 'mutation' },
        y: { field: 'count', label: 'messages' },
        series: 'outcome',
        data: kinds.flatMap((k) => [
          { kind: k.kind, outcome: 'read, same digest', count: k.read },
          { kind: k.kind, outcome: 'refused by all, read error', count: k.refused },
        ]),
      },
    ],
    ratios: [
      { label: 'random schemas', value: stats.schemas, target: ctx.quick ? 100 : 1000, unit: '' },
      { label: 'malicious messages', value: stats.malicious, target: ctx.quick ? 10_000 : 1_000_000, unit: '' },
      {
        label: 'mismatches + crashes + hangs',
        value: stats.mismatches + stats.crashes + stats.hangs,
        target: 0,
        op: '<=',
        unit: '',
      },
    ],
    raw: { stats, coverage, compileMs, runMs, wallMs },
  };
}
