/** A value packed for the wasm side: `-` when absent, else its length in
 * UTF-16 units, `:` and the value (src/packed.rs `Fields`). */
export function packed(value) {
  if (value === null || value === undefined) return "-";
  const s = String(value);
  return `${s.length}:${s}`;
}
