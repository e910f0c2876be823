// Drawing one TrackDrawing (a tile's or what is printed on a hex) into SVG, in board
// coordinates: every end is rotated here, so what is drawn is exactly what the data says.
import { TILE_COLOURS } from "./colours.js";
import { HEIGHT, edgeDirection, edgeMidpoint, rotateEdge } from "./geometry.js";
import { round, svg, text } from "./svg.js";

export const SPOT_RADIUS = 11;
const CITY = "REVENUE_CENTRE_KIND_CITY";
const TOWN = "REVENUE_CENTRE_KIND_TOWN";
const OFFBOARD = "REVENUE_CENTRE_KIND_OFFBOARD";

export const isEdge = (end) => end.edge !== undefined || end.stop === undefined;
const edgeOf = (end) => end.edge ?? 0;

// The board edge (0-5) each path end reaches, or "stop<i>", as written in data-from / data-to.
function endName(end, rotation) {
  return isEdge(end) ? String(rotateEdge(edgeOf(end), rotation)) : `stop${end.stop}`;
}

// Where each revenue centre sits: the centre of the hex when there is one; several are pushed
// toward the edges their track leaves by.
function stopPositions(drawing, c, rotation) {
  const stops = drawing.stops || [];
  if (stops.length <= 1) return stops.map(() => ({ ...c }));
  return stops.map((_, index) => {
    const directions = [];
    for (const path of drawing.paths || []) {
      for (const [mine, other] of [
        [path.a, path.b],
        [path.b, path.a],
      ]) {
        if (!isEdge(mine) && mine.stop === index && isEdge(other)) {
          directions.push(edgeDirection(rotateEdge(edgeOf(other), rotation)));
        }
      }
    }
    let dx = directions.reduce((sum, d) => sum + d.x, 0);
    let dy = directions.reduce((sum, d) => sum + d.y, 0);
    if (Math.hypot(dx, dy) < 0.01) {
      const spread = edgeDirection(index * Math.floor(6 / stops.length));
      [dx, dy] = [spread.x, spread.y];
    }
    const length = Math.hypot(dx, dy);
    return { x: c.x + (dx / length) * HEIGHT * 0.24, y: c.y + (dy / length) * HEIGHT * 0.24 };
  });
}

// The centres of a city's station spots, left to right (three: a triangle).
export function spotCentres(p, spots) {
  const r = SPOT_RADIUS;
  if (spots <= 1) return [{ ...p }];
  if (spots === 2)
    return [
      { x: p.x - r, y: p.y },
      { x: p.x + r, y: p.y },
    ];
  if (spots === 3) {
    return [
      { x: p.x - r, y: p.y + r * 0.6 },
      { x: p.x + r, y: p.y + r * 0.6 },
      { x: p.x, y: p.y - r * 1.1 },
    ];
  }
  return Array.from({ length: spots }, (_, i) => {
    const angle = (2 * Math.PI * i) / spots - Math.PI / 2;
    return { x: p.x + r * 1.3 * Math.cos(angle), y: p.y + r * 1.3 * Math.sin(angle) };
  });
}

function pathData(path, c, rotation, positions) {
  const point = (end) =>
    isEdge(end) ? edgeMidpoint(c, rotateEdge(edgeOf(end), rotation)) : positions[end.stop];
  const [p, q] = [point(path.a), point(path.b)];
  const move = `M ${round(p.x)} ${round(p.y)}`;
  if (isEdge(path.a) && isEdge(path.b)) {
    const apart = (((edgeOf(path.a) - edgeOf(path.b)) % 6) + 6) % 6;
    if (apart !== 3) return `${move} Q ${round(c.x)} ${round(c.y)} ${round(q.x)} ${round(q.y)}`;
  }
  return `${move} L ${round(q.x)} ${round(q.y)}`;
}

// The board edges the drawing's track reaches, rotated.
export function exits(drawing, rotation) {
  const edges = new Set();
  for (const path of drawing.paths || []) {
    for (const end of [path.a, path.b]) if (isEdge(end)) edges.add(rotateEdge(edgeOf(end), rotation));
  }
  return edges;
}

function revenueLabel(c, value, used) {
  const free = [4, 2, 5, 1, 3, 0].find((edge) => !used.has(edge));
  const direction = edgeDirection(free ?? 4);
  const at = { x: c.x + direction.x * HEIGHT * 0.32, y: c.y + direction.y * HEIGHT * 0.32 };
  return svg(
    "g",
    { class: "revenue" },
    svg("circle", { cx: round(at.x), cy: round(at.y), r: 8 }),
    text(at.x, at.y + 3.5, value, { "text-anchor": "middle" }),
  );
}

// An off-board's values sit in the upper part of the hex, the train revenues just below them:
// the place name is written along the bottom (map.js) and the track runs to the centre.
const OFFBOARD_ROW = -HEIGHT * 0.33; // the middle of the values' row, from the centre
const OFFBOARD_BOX = { width: 22, height: 15 };

// The train revenues' x: off the centre, away from the side the track leaves by.
function trainRevenueX(c, used) {
  const exitsX = [...used].map((edge) => edgeDirection(edge).x);
  const mean = exitsX.length ? exitsX.reduce((sum, x) => sum + x, 0) / exitsX.length : 0;
  return Math.abs(mean) > 0.3 ? c.x - Math.sign(mean) * HEIGHT * 0.17 : c.x;
}

function offboardValues(stop, c, level, order, used) {
  // In the phases' order (low before high): a protobuf JSON map has no order of its own.
  const rank = (name) => (order.includes(name) ? order.indexOf(name) : order.length);
  const levels = Object.entries(stop.revenueByLevel || {}).sort(([a], [b]) => rank(a) - rank(b));
  const group = svg("g", { class: "offboard-revenue" });
  const { width, height } = OFFBOARD_BOX;
  const middle = c.y + OFFBOARD_ROW;
  levels.forEach(([name, value], i) => {
    const x = c.x - (levels.length * width) / 2 + i * width;
    group.append(
      svg("rect", {
        x: round(x),
        y: round(middle - height / 2),
        width,
        height,
        class: name === level ? "current" : "",
      }),
      text(x + width / 2, middle + 3.5, value, { "text-anchor": "middle", dataset: { level: name } }),
    );
  });
  Object.entries(stop.revenueByTrain || {}).forEach(([train, value], i) => {
    group.append(
      text(trainRevenueX(c, used), middle + height / 2 + 8 + i * 8, `${train}: ${value}`, {
        "text-anchor": "middle",
        class: "train-revenue",
        dataset: { train },
      }),
    );
  });
  return group;
}

// The drawing as a <g>: background, track, revenue centres, revenues, label and terrain.
// Returns the group and, for each city (counted as station tokens count them), its spot centres.
export function drawTrack(drawing, c, rotation, corners, { offboardLevel = "", levels = [] } = {}) {
  const stops = drawing.stops || [];
  const positions = stopPositions(drawing, c, rotation);
  const used = exits(drawing, rotation);
  const group = svg("g", { class: "drawing", dataset: { colour: drawing.colour || "white" } });
  group.append(
    svg("polygon", {
      class: "hex-shape",
      points: corners.map((p) => `${round(p.x)},${round(p.y)}`).join(" "),
      fill: TILE_COLOURS[drawing.colour || "white"] || TILE_COLOURS.white,
    }),
  );
  for (const path of drawing.paths || []) {
    const ends = { from: endName(path.a, rotation), to: endName(path.b, rotation) };
    const d = pathData(path, c, rotation, positions);
    group.append(
      svg("path", { class: "track-border", d }),
      svg("path", { class: "track", d, dataset: ends }),
    );
  }
  const cities = [];
  stops.forEach((stop, index) => {
    const p = positions[index];
    if (stop.kind === CITY) {
      const centres = spotCentres(p, stop.spots || 1);
      const city = svg("g", {
        class: "city",
        dataset: { stop: index, city: cities.length, spots: stop.spots || 1 },
      });
      if (centres.length > 1) {
        const xs = centres.map((q) => q.x);
        const ys = centres.map((q) => q.y);
        const r = SPOT_RADIUS;
        city.append(
          svg("rect", {
            class: "city-body",
            x: round(Math.min(...xs) - r),
            y: round(Math.min(...ys) - r),
            width: round(Math.max(...xs) - Math.min(...xs) + 2 * r),
            height: round(Math.max(...ys) - Math.min(...ys) + 2 * r),
            rx: r,
          }),
        );
      }
      centres.forEach((q, spot) => {
        city.append(
          svg("circle", { class: "spot", cx: round(q.x), cy: round(q.y), r: SPOT_RADIUS, dataset: { spot } }),
        );
      });
      group.append(city);
      cities.push(centres);
    } else if (stop.kind === TOWN) {
      group.append(
        svg("circle", { class: "town", cx: round(p.x), cy: round(p.y), r: 6, dataset: { stop: index } }),
      );
    }
    if (stop.kind === OFFBOARD) {
      group.append(offboardValues(stop, c, offboardLevel, levels, used));
    } else if (stop.revenue) {
      group.append(revenueLabel(c, stop.revenue, used));
    }
  });
  if (drawing.label) {
    group.append(text(c.x - HEIGHT * 0.38, c.y - HEIGHT * 0.18, drawing.label, { class: "label" }));
  }
  if (drawing.cost) {
    const terrain = (drawing.terrain || []).join(" ") || "terrain";
    const at = { x: c.x - HEIGHT * 0.42, y: c.y + HEIGHT * 0.3 };
    group.append(
      svg(
        "g",
        { class: "terrain", dataset: { terrain, cost: drawing.cost } },
        // A wave for water alone; a peak for mountains, or a cost without a type (Kotohira).
        terrain === "water"
          ? svg("path", { class: "water", d: `M ${round(at.x)} ${round(at.y - 3)} q 2.5 -4 5 0 t 5 0` })
          : svg("path", { class: "mountain", d: `M ${round(at.x)} ${round(at.y)} l 5 -9 l 5 9 z` }),
        text(at.x + 11, at.y, `¥${drawing.cost}`),
      ),
    );
  }
  return { group, cities };
}
