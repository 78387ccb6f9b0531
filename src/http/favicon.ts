// The site icon browsers ask every page for (/favicon.ico): the account pages and GraphiQL
// otherwise logged a 404 per page. Drawn here as text and encoded once, when first asked
// for, as a 16x16 PNG inside an ICO file, so no binary file ships beside the code.
import { crc32, deflateSync } from 'node:zlib';
import { Response } from './fetch.js';

/** `.` transparent, `b` blue, `w` white: a "C" on a rounded square. */
const DRAWING = [
  '.bbbbbbbbbbbbbb.',
  'bbbbbbbbbbbbbbbb',
  'bbbbbbbbbbbbbbbb',
  'bbbbbbwwwwwbbbbb',
  'bbbbbwwwwwwwbbbb',
  'bbbbwwwbbbbwwbbb',
  'bbbbwwbbbbbbbbbb',
  'bbbbwwbbbbbbbbbb',
  'bbbbwwbbbbbbbbbb',
  'bbbbwwbbbbbbbbbb',
  'bbbbwwwbbbbwwbbb',
  'bbbbbwwwwwwwbbbb',
  'bbbbbbwwwwwbbbbb',
  'bbbbbbbbbbbbbbbb',
  'bbbbbbbbbbbbbbbb',
  '.bbbbbbbbbbbbbb.',
];
const COLORS: Record<string, number[]> = { '.': [0, 0, 0, 0], b: [0x25, 0x63, 0xeb, 0xff], w: [0xff, 0xff, 0xff, 0xff] };
const SIZE = DRAWING.length;

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type, 'latin1'), data])));
  return Buffer.concat([length, Buffer.from(type, 'latin1'), data, crc]);
}

function png(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(SIZE, 0);
  header.writeUInt32BE(SIZE, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits per channel, RGBA, no interlace
  // Each row: filter type 0, then its pixels.
  const pixels = Buffer.from(DRAWING.flatMap((row) => [0, ...[...row].flatMap((cell) => COLORS[cell]!)]));
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(pixels)), chunk('IEND', Buffer.alloc(0))]);
}

/** An ICO file of one image, stored as PNG (every current browser reads that form). */
function ico(): Buffer {
  const image = png();
  const header = Buffer.alloc(22);
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(1, 4); // one image
  header.set([SIZE, SIZE, 0, 0], 6); // width, height, no palette, reserved
  header.writeUInt16LE(1, 10); // colour planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(header.length, 18); // where the image starts
  return Buffer.concat([header, image]);
}

let icon: Buffer | undefined;

/** The answer to `GET /favicon.ico` (and HEAD); undefined for any other request. */
export function favicon(request: Request, pathname: string): Response | undefined {
  if (pathname !== '/favicon.ico' || (request.method !== 'GET' && request.method !== 'HEAD')) return undefined;
  icon ??= ico();
  const headers = { 'content-type': 'image/x-icon', 'content-length': String(icon.length), 'cache-control': 'public, max-age=86400' };
  return new Response(request.method === 'HEAD' ? null : new Uint8Array(icon), { headers });
}
