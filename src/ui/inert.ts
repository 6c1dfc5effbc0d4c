/**
 * The only place the explorer turns resource bytes into URLs. A `blob:` URL belongs to the page's
 * origin, and a browser opens it as a document of the blob's type — in a new tab ("open image in
 * new tab", a middle-click on a download link) that document is not under the page's CSP. An SVG,
 * HTML, XHTML, XML (with an XSLT stylesheet), PDF or any other type a browser renders as a document
 * would run its script as the explorer, with the user's token. So every URL made here has a type
 * that can never be such a document:
 *
 * - a raster picture (PNG, JPEG, GIF, WebP, AVIF, BMP, ICO) typed by its own signature bytes, never
 *   by the type the resource reports (a "PNG" holding SVG or HTML is not one);
 * - `application/octet-stream`, which a browser only ever saves, for downloads;
 * - SVG is never given a URL: it is decoded off the page in an `<img>` (where no script runs) from
 *   a `data:` URL, drawn onto a canvas, and shown as the canvas's PNG.
 *
 * Nothing else in src/ui may call `URL.createObjectURL` (eslint enforces it).
 */

export type RasterType =
  | 'image/png'
  | 'image/jpeg'
  | 'image/gif'
  | 'image/webp'
  | 'image/avif'
  | 'image/bmp'
  | 'image/x-icon';

const ascii = (bytes: Uint8Array, from: number, text: string): boolean =>
  [...text].every((c, i) => bytes[from + i] === c.charCodeAt(0));

/** The raster type the bytes' signature names, or undefined when they are no raster picture. */
export function rasterTypeOf(bytes: Uint8Array): RasterType | undefined {
  if (
    bytes.length >= 8 &&
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((b, i) => bytes[i] === b)
  )
    return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff)
    return 'image/jpeg';
  if (ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a')) return 'image/gif';
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return 'image/webp';
  if (ascii(bytes, 4, 'ftypavif') || ascii(bytes, 4, 'ftypavis')) return 'image/avif';
  if (bytes.length >= 26 && ascii(bytes, 0, 'BM')) return 'image/bmp';
  if (
    bytes.length >= 6 &&
    bytes[0] === 0 &&
    bytes[1] === 0 &&
    bytes[2] === 1 &&
    bytes[3] === 0 &&
    (bytes[4] ?? 0) + (bytes[5] ?? 0) > 0
  )
    return 'image/x-icon';
  return undefined;
}

/** A URL of the bytes as a picture, when their signature says they are a raster one. */
export function rasterUrl(bytes: Uint8Array<ArrayBuffer>): string | undefined {
  const type = rasterTypeOf(bytes);
  return type === undefined ? undefined : URL.createObjectURL(new Blob([bytes], { type }));
}

/** A URL of the bytes to save: `application/octet-stream`, which no browser opens as a document. */
export function downloadUrl(bytes: Uint8Array<ArrayBuffer>): string {
  return URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
}

export interface Rasterised {
  /** A `blob:` URL of the PNG. */
  url: string;
  /** The picture's size in CSS pixels. */
  width: number;
  height: number;
}

/** The longest side, in device pixels, a picture is drawn at. */
export const MAX_RASTER_SIDE = 4096;
/** What a browser gives an SVG with no size of its own. */
const DEFAULT_SIZE = { width: 300, height: 150 };

/**
 * Draws SVG bytes as a PNG: decoded as an image (the one way a browser renders SVG without running
 * its script or loading anything it names), at the device's pixel ratio (at most 2) and at most
 * MAX_RASTER_SIDE pixels a side. Rejects when the bytes do not decode as SVG.
 */
export async function rasteriseSvg(bytes: Uint8Array, ratio = 1): Promise<Rasterised> {
  const image = new Image();
  image.src = `data:image/svg+xml;base64,${base64Of(bytes)}`;
  try {
    await image.decode();
  } catch {
    throw new Error('not an image this page can show');
  }
  const width = image.naturalWidth || DEFAULT_SIZE.width;
  const height = image.naturalHeight || DEFAULT_SIZE.height;
  const scale = Math.min(Math.max(ratio, 1), 2, MAX_RASTER_SIDE / Math.max(width, height));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(width * scale));
  canvas.height = Math.max(1, Math.round(height * scale));
  const context = canvas.getContext('2d');
  if (context === null) throw new Error('no canvas to draw the image on');
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  const png = await new Promise<Blob>((resolve, reject) =>
    canvas.toBlob(
      (blob) => (blob === null ? reject(new Error('the image could not be drawn')) : resolve(blob)),
      'image/png',
    ),
  );
  const drawn = Math.min(1, MAX_RASTER_SIDE / Math.max(width, height));
  return {
    url: URL.createObjectURL(new Blob([png], { type: 'image/png' })),
    width: Math.round(width * drawn),
    height: Math.round(height * drawn),
  };
}

function base64Of(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
