// The task module of the nexus-tasks experiment: the same functions run on the loop
// (imported) and on the pool's workers (tasks()).

/** CPU-bound JS: `n` rounds of float math (deterministic work, not a timed spin). */
export function burn(n) {
  let x = 0;
  for (let i = 1; i <= n; i++) x += Math.sqrt(i) * Math.sin(i);
  return x;
}

/** A stream transform doing a copy's work: every chunk copied into a new buffer. */
export async function* copy(chunks) {
  for await (const chunk of chunks) yield new Uint8Array(chunk);
}
