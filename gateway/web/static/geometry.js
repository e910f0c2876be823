// Where things are on the map: flat-topped hexes in doubled coordinates, edges 0-5 clockwise
// from south (TitleService's `layout`, "flat"). Pure functions of numbers; no DOM.

export const SIZE = 40; // centre to corner
export const HEIGHT = Math.sqrt(3) * SIZE; // flat side to flat side
export const MARGIN = 30;

// The centre of the hex at (column index, row number).
export function centre(column, row) {
  return { x: MARGIN + SIZE + column * 1.5 * SIZE, y: MARGIN + (row * HEIGHT) / 2 };
}

// The six corners of a hex around its centre.
export function corners(c, size = SIZE) {
  return [0, 1, 2, 3, 4, 5].map((i) => {
    const angle = (Math.PI / 3) * i;
    return { x: c.x + size * Math.cos(angle), y: c.y + size * Math.sin(angle) };
  });
}

// The unit direction from a hex's centre to the middle of edge `edge` (0 = south, clockwise
// on the screen: 1 south-west, 2 north-west, 3 north, 4 north-east, 5 south-east).
export function edgeDirection(edge) {
  const angle = (Math.PI / 180) * (90 + 60 * edge);
  return { x: Math.cos(angle), y: Math.sin(angle) };
}

export function edgeMidpoint(c, edge) {
  const d = edgeDirection(edge);
  return { x: c.x + (d.x * HEIGHT) / 2, y: c.y + (d.y * HEIGHT) / 2 };
}

// A tile laid with rotation r shows its drawn edge e on the hex's edge (e + r) mod 6.
export function rotateEdge(edge, rotation) {
  return (((edge + rotation) % 6) + 6) % 6;
}

// "K8" -> { column: 10, row: 8 }.
export function parseCoordinate(coordinate) {
  const match = /^([A-Z]+)(\d+)$/.exec(coordinate);
  if (!match) return null;
  let column = 0;
  for (const letter of match[1]) column = column * 26 + letter.charCodeAt(0) - 64;
  return { column: column - 1, row: Number(match[2]) };
}

export function coordinateCentre(coordinate) {
  const parsed = parseCoordinate(coordinate);
  return parsed ? centre(parsed.column, parsed.row) : null;
}

export function pointsAttribute(points) {
  return points.map((p) => `${p.x.toFixed(2)},${p.y.toFixed(2)}`).join(" ");
}
