// A task module, for its type only (main.ts).
export const version = '1.0.0';
export function blur(pixels: Uint8Array, width: number, radius: number): Uint8Array {
  return pixels.subarray(0, width * radius);
}
export async function label(n: number): Promise<{ n: number; text: string }> {
  return { n, text: String(n) };
}
