// QR codes drawn in the page, as SVG: a ticket's QR text (about 95 characters) becomes the
// same kind of code the ticket's PNG carries (QR model 2, byte mode, error correction level M),
// without a library and without asking the service for an image. Versions 1 to 10 hold up to
// 213 bytes, more than any ticket's text. The steps follow ISO/IEC 18004: data codewords,
// Reed-Solomon error correction per block, interleaving, function patterns, the mask of
// lowest penalty, format and version bits.
"use strict";

const QRCode = (() => {
  // Level M, per version: [error correction codewords per block, [blocks, data codewords
  // per block] of the first group, and of the second group if any].
  const BLOCKS = [null, [10, [1, 16]], [16, [1, 28]], [26, [1, 44]], [18, [2, 32]],
    [24, [2, 43]], [16, [4, 27]], [18, [4, 31]], [22, [2, 38], [2, 39]],
    [22, [3, 36], [2, 37]], [26, [4, 43], [1, 44]]];
  const ALIGNMENT = [null, [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38],
    [6, 24, 42], [6, 26, 46], [6, 28, 50]];
  const QUIET = 4; // modules of light margin a scanner needs around the code

  // Arithmetic in GF(256) over the polynomial 0x11d, by tables of powers and logarithms.
  const EXP = [], LOG = [];
  for (let i = 0, x = 1; i < 255; i++, x = (x << 1) ^ (x & 0x80 ? 0x11d : 0)) {
    EXP[i] = x;
    LOG[x] = i;
  }
  for (let i = 255; i < 512; i++) EXP[i] = EXP[i - 255];
  const times = (a, b) => (a && b ? EXP[LOG[a] + LOG[b]] : 0);

  function generator(degree) {
    let poly = [1];
    for (let i = 0; i < degree; i++) {
      const next = new Array(poly.length + 1).fill(0);
      poly.forEach((c, j) => { next[j] ^= c; next[j + 1] ^= times(c, EXP[i]); });
      poly = next;
    }
    return poly;
  }

  function errorCorrection(data, degree) {
    const gen = generator(degree);
    const rest = new Array(degree).fill(0);
    for (const byte of data) {
      const factor = byte ^ rest.shift();
      rest.push(0);
      for (let i = 0; i < degree; i++) rest[i] ^= times(gen[i + 1], factor);
    }
    return rest;
  }

  const dataCodewords = (version) =>
    BLOCKS[version].slice(1).reduce((sum, [blocks, size]) => sum + blocks * size, 0);
  const countBits = (version) => (version < 10 ? 8 : 16);

  function codewords(bytes, version) {
    const bits = [];
    const put = (value, length) => {
      for (let i = length - 1; i >= 0; i--) bits.push((value >>> i) & 1);
    };
    put(0b0100, 4); // byte mode
    put(bytes.length, countBits(version));
    bytes.forEach((byte) => put(byte, 8));
    const capacity = dataCodewords(version) * 8;
    put(0, Math.min(4, capacity - bits.length));
    put(0, (8 - (bits.length % 8)) % 8);
    const data = [];
    for (let i = 0; i < bits.length; i += 8) data.push(parseInt(bits.slice(i, i + 8).join(""), 2));
    for (let pad = 0xec; data.length < capacity / 8; pad ^= 0xec ^ 0x11) data.push(pad);
    // Split into blocks, each with its error correction, then interleave column by column.
    const [ecPerBlock, ...groups] = BLOCKS[version];
    const blocks = [];
    let at = 0;
    for (const [count, size] of groups) {
      for (let b = 0; b < count; b++, at += size) blocks.push(data.slice(at, at + size));
    }
    const corrections = blocks.map((block) => errorCorrection(block, ecPerBlock));
    const out = [];
    const longest = Math.max(...blocks.map((block) => block.length));
    for (let i = 0; i < longest; i++) {
      for (const block of blocks) if (i < block.length) out.push(block[i]);
    }
    for (let i = 0; i < ecPerBlock; i++) corrections.forEach((ec) => out.push(ec[i]));
    return out;
  }

  function grid(version) {
    const size = 17 + 4 * version;
    const modules = Array.from({ length: size }, () => new Array(size).fill(false));
    const reserved = Array.from({ length: size }, () => new Array(size).fill(false));
    const set = (x, y, dark) => { modules[y][x] = dark; reserved[y][x] = true; };
    for (let i = 0; i < size; i++) { set(6, i, i % 2 === 0); set(i, 6, i % 2 === 0); }
    for (const [cx, cy] of [[3, 3], [size - 4, 3], [3, size - 4]]) {
      for (let dy = -4; dy <= 4; dy++) {
        for (let dx = -4; dx <= 4; dx++) {
          const x = cx + dx, y = cy + dy, ring = Math.max(Math.abs(dx), Math.abs(dy));
          if (x >= 0 && x < size && y >= 0 && y < size) set(x, y, ring !== 2 && ring !== 4);
        }
      }
    }
    const centres = ALIGNMENT[version], last = centres.length - 1;
    centres.forEach((cx, i) => centres.forEach((cy, j) => {
      if ((i === 0 && j === 0) || (i === 0 && j === last) || (i === last && j === 0)) return;
      for (let dy = -2; dy <= 2; dy++) {
        for (let dx = -2; dx <= 2; dx++) {
          set(cx + dx, cy + dy, Math.max(Math.abs(dx), Math.abs(dy)) !== 1);
        }
      }
    }));
    drawFormat(set, size, 0); // reserved now, drawn again once the mask is chosen
    if (version >= 7) {
      let rest = version;
      for (let i = 0; i < 12; i++) rest = (rest << 1) ^ ((rest >>> 11) * 0x1f25);
      const bits = (version << 12) | rest;
      for (let i = 0; i < 18; i++) {
        const dark = ((bits >>> i) & 1) === 1, a = size - 11 + (i % 3), b = Math.floor(i / 3);
        set(a, b, dark);
        set(b, a, dark);
      }
    }
    return { size, modules, reserved, set };
  }

  function drawFormat(set, size, mask) {
    let rest = mask; // level M's two bits are 00
    for (let i = 0; i < 10; i++) rest = (rest << 1) ^ ((rest >>> 9) * 0x537);
    const bits = ((mask << 10) | rest) ^ 0x5412;
    const bit = (i) => ((bits >>> i) & 1) === 1;
    for (let i = 0; i <= 5; i++) set(8, i, bit(i));
    set(8, 7, bit(6));
    set(8, 8, bit(7));
    set(7, 8, bit(8));
    for (let i = 9; i < 15; i++) set(14 - i, 8, bit(i));
    for (let i = 0; i < 8; i++) set(size - 1 - i, 8, bit(i));
    for (let i = 8; i < 15; i++) set(8, size - 15 + i, bit(i));
    set(8, size - 8, true);
  }

  function placeData({ size, modules, reserved }, words) {
    let i = 0;
    for (let right = size - 1; right >= 1; right -= 2) {
      if (right === 6) right = 5; // the vertical timing pattern's column is skipped
      const upward = ((right + 1) & 2) === 0;
      for (let step = 0; step < size; step++) {
        const y = upward ? size - 1 - step : step;
        for (const x of [right, right - 1]) {
          if (reserved[y][x] || i >= words.length * 8) continue;
          modules[y][x] = ((words[i >>> 3] >>> (7 - (i & 7))) & 1) === 1;
          i++;
        }
      }
    }
  }

  const MASKS = [(x, y) => (x + y) % 2 === 0, (x, y) => y % 2 === 0, (x) => x % 3 === 0,
    (x, y) => (x + y) % 3 === 0, (x, y) => (Math.floor(x / 3) + Math.floor(y / 2)) % 2 === 0,
    (x, y) => ((x * y) % 2) + ((x * y) % 3) === 0,
    (x, y) => (((x * y) % 2) + ((x * y) % 3)) % 2 === 0,
    (x, y) => (((x + y) % 2) + ((x * y) % 3)) % 2 === 0];

  function masked({ size, modules, reserved }, mask) {
    return modules.map((row, y) => row.map(
      (dark, x) => (reserved[y][x] ? dark : dark !== MASKS[mask](x, y))));
  }

  // The standard's penalty: long runs, 2×2 blocks, finder-like patterns, unbalanced darkness.
  function penalty(modules) {
    const size = modules.length;
    const lines = [];
    for (let i = 0; i < size; i++) {
      lines.push(modules[i].map(Number).join(""), modules.map((row) => Number(row[i])).join(""));
    }
    let score = 0;
    for (const line of lines) {
      for (const run of line.match(/0+|1+/g)) if (run.length >= 5) score += run.length - 2;
      score += 40 * (`0000${line}0000`.match(/(?=00001011101|10111010000)/g) || []).length;
    }
    let dark = 0;
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        dark += modules[y][x];
        if (x && y && modules[y][x] === modules[y - 1][x] && modules[y][x] === modules[y][x - 1] &&
            modules[y][x] === modules[y - 1][x - 1]) score += 3;
      }
    }
    const total = size * size;
    return score + 10 * (Math.ceil(Math.abs(dark * 20 - total * 10) / total) - 1);
  }

  /** The modules (rows of booleans, true dark) of `text`'s QR code. */
  function encode(text) {
    const bytes = Array.from(new TextEncoder().encode(text));
    let version = 1;
    while (4 + countBits(version) + 8 * bytes.length > dataCodewords(version) * 8) {
      if (++version > 10) throw new RangeError("too long for a ticket's QR code");
    }
    const layout = grid(version);
    placeData(layout, codewords(bytes, version));
    let best = null;
    for (let mask = 0; mask < 8; mask++) {
      drawFormat(layout.set, layout.size, mask);
      const candidate = masked(layout, mask);
      const score = penalty(candidate);
      if (!best || score < best.score) best = { score, modules: candidate };
    }
    return best.modules;
  }

  /** An <svg> of `text`'s QR code, dark on white with its quiet zone, named `label`. */
  function svg(text, label) {
    const modules = encode(text);
    const side = modules.length + 2 * QUIET;
    const path = [];
    modules.forEach((row, y) => row.forEach((dark, x) => {
      if (dark) path.push(`M${x + QUIET} ${y + QUIET}h1v1h-1z`);
    }));
    const ns = "http://www.w3.org/2000/svg";
    const image = document.createElementNS(ns, "svg");
    image.setAttribute("viewBox", `0 0 ${side} ${side}`);
    image.setAttribute("role", "img");
    image.setAttribute("aria-label", label);
    image.setAttribute("shape-rendering", "crispEdges");
    const background = document.createElementNS(ns, "rect");
    background.setAttribute("width", side);
    background.setAttribute("height", side);
    background.setAttribute("fill", "#fff");
    const code = document.createElementNS(ns, "path");
    code.setAttribute("d", path.join(""));
    code.setAttribute("fill", "#000");
    image.append(background, code);
    return image;
  }

  return { encode, svg };
})();
