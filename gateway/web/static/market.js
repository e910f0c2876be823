// The stock market grid as SVG (TitleService's market), with each started corporation's
// marker on its space (the state's market_position [row, column]), and a legend of the zones
// the title's market has.
import { corporationColour } from "./colours.js";
import { h } from "./html.js";
import { round, svg, text } from "./svg.js";

const WIDTH = 44;
const HEIGHT = 30;
const MARGIN = 4;
const PRICE_BASELINE = 11; // the price is written at the top left of its space
// A zone's class: "zone-yellow" for MARKET_ZONE_YELLOW; none for the white spaces.
const zoneName = (zone) => (zone || "").replace("MARKET_ZONE_", "").toLowerCase();
const WHITE_ZONES = new Set(["", "MARKET_ZONE_NORMAL", "MARKET_ZONE_UNSPECIFIED"]);
const zoneClass = (zone) => (WHITE_ZONES.has(zone || "") ? "" : `zone-${zoneName(zone)}`);
// What each zone means (rulebook 3.1), in the legend's order.
const ZONE_MEANING = {
  MARKET_ZONE_YELLOW: ["yellow", "its certificates do not count toward the certificate limit"],
  MARKET_ZONE_ORANGE: [
    "orange",
    "its certificates do not count toward the certificate limit, and a player may hold more than 60%",
  ],
};

// Where the markers on one space go, inside its cell and below its price: side by side, in
// rows of up to three (four when there are more than six), smaller when there are two rows,
// so that none covers another.
export function markerLayout(count) {
  if (count <= 0) return [];
  const perRow = count <= 3 ? count : count <= 6 ? 3 : 4;
  const rows = Math.ceil(count / perRow);
  const spacing = WIDTH / perRow;
  const rowHeight = (HEIGHT - PRICE_BASELINE) / rows;
  const radius = rows === 1 ? 6.5 : Math.min(spacing / 2 - 0.5, rowHeight / 2 - 0.25);
  return Array.from({ length: count }, (_, i) => {
    const row = Math.floor(i / perRow);
    const inRow = Math.min(perRow, count - row * perRow);
    const x = WIDTH / 2 + ((i % perRow) - (inRow - 1) / 2) * spacing;
    const y = rows === 1 ? HEIGHT - 10 : PRICE_BASELINE + rowHeight * (row + 0.5);
    return { x, y, radius };
  });
}

function legend(rows) {
  const spaces = rows.flatMap((row) => row.spaces || []);
  const entries = [];
  if (spaces.some((space) => space.par))
    entries.push(["par", "par", "a corporation may start at this price"]);
  const zones = new Set(spaces.map((space) => space.zone));
  for (const [zone, [name, meaning]] of Object.entries(ZONE_MEANING))
    if (zones.has(zone)) entries.push([zoneClass(zone), name, meaning]);
  // A zone this page has no words for is still named, so that no colour goes unexplained.
  for (const zone of zones)
    if (zoneClass(zone) && !ZONE_MEANING[zone]) entries.push([zoneClass(zone), zoneName(zone), ""]);
  return h(
    "ul",
    { id: "market-legend" },
    entries.map(([kind, name, meaning]) =>
      h(
        "li",
        { dataset: { zone: kind } },
        h("span", { class: `swatch ${kind}`, "aria-hidden": "true" }),
        h("b", {}, name),
        meaning ? `: ${meaning}` : "",
      ),
    ),
  );
}

export class Market {
  constructor(container, rows) {
    this.rows = rows;
    const columns = Math.max(...rows.map((r) => (r.spaces || []).length));
    this.root = svg("svg", {
      id: "market-grid",
      viewBox: `0 0 ${2 * MARGIN + columns * WIDTH} ${2 * MARGIN + rows.length * HEIGHT}`,
      role: "img",
      "aria-label": "Stock market",
    });
    const spaces = svg("g", { class: "spaces" });
    rows.forEach((row, r) => {
      (row.spaces || []).forEach((space, c) => {
        const x = MARGIN + c * WIDTH;
        const y = MARGIN + r * HEIGHT;
        const classes = ["space", zoneClass(space.zone), space.par ? "par" : ""]
          .filter(Boolean)
          .join(" ");
        spaces.append(
          svg(
            "g",
            { class: classes, dataset: { row: r, column: c, price: space.price } },
            svg("rect", { x, y, width: WIDTH, height: HEIGHT }),
            text(x + 3, y + 11, space.price, { class: "price" }),
          ),
        );
      });
    });
    this.markers = svg("g", { class: "markers" });
    this.root.append(spaces, this.markers);
    container.replaceChildren(this.root, legend(rows));
  }

  render(corporations) {
    const bySpace = new Map();
    for (const corporation of corporations || []) {
      const position = corporation.market_position;
      if (!position) continue;
      const key = `${position[0]},${position[1]}`;
      bySpace.set(key, [...(bySpace.get(key) || []), corporation.id]);
    }
    const markers = [];
    for (const [key, ids] of bySpace) {
      const [row, column] = key.split(",").map(Number);
      // Tokens on one space form a stack, the latest to arrive beneath (rulebook 3.4):
      // drawn side by side, in the state's order.
      const places = markerLayout(ids.length);
      ids.forEach((id, i) => {
        const x = MARGIN + column * WIDTH + places[i].x;
        const y = MARGIN + row * HEIGHT + places[i].y;
        const colour = corporationColour(id);
        markers.push(
          svg(
            "g",
            { class: "market-marker", dataset: { corporation: id, row, column, stacked: ids.length } },
            svg("circle", { cx: round(x), cy: round(y), r: places[i].radius, fill: colour.fill }),
            text(x, y + places[i].radius * 0.38, id, {
              "text-anchor": "middle",
              fill: colour.text,
              "font-size": round(places[i].radius * 0.95),
            }),
          ),
        );
      });
    }
    this.markers.replaceChildren(...markers);
  }
}
