// piscina task: the JS MD5 loop (blueimp-md5) off the main thread (http-md5's worker row).
import { md5Blueimp, md5Loop } from './md5-js.mjs';

/** @param {{ text: string, rounds: number }} task */
export default function md5Task({ text, rounds }) {
  return md5Loop(md5Blueimp, text, rounds);
}
