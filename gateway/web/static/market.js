// The stock market grid as SVG (TitleService's market), with each started corporation's
// marker on its space (the state's market_position [row, column]).
import { corporationColour } from "./colours.js";
import { round, svg, text } from "./svg.js";

const WIDTH = 44;
const HEIGHT = 30;
const MARGIN = 4;
const ZONE_CLASS = {
  MARKET_ZONE_YELLOW: "zone-yellow",
  MARKET_ZONE_ORANGE: "zone-orange",
};

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
        const classes = ["space", ZONE_CLASS[space.zone] || "", space.par ? "par" : ""]
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
    container.replaceChildren(this.root);
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
      ids.forEach((id, i) => {
        // Tokens on one space form a stack, the latest to arrive beneath (rulebook 3.4):
        // drawn side by side, in the state's order.
        const x = MARGIN + column * WIDTH + 9 + (i % 3) * 13;
        const y = MARGIN + row * HEIGHT + 20 - Math.floor(i / 3) * 6;
        const colour = corporationColour(id);
        markers.push(
          svg(
            "g",
            { class: "market-marker", dataset: { corporation: id, row, column } },
            svg("circle", { cx: round(x), cy: round(y), r: 6.5, fill: colour.fill }),
            text(x, y + 2.5, id, { "text-anchor": "middle", fill: colour.text }),
          ),
        );
      });
    }
    this.markers.replaceChildren(...markers);
  }
}
