// The map of the board as SVG: every hex of the title with what is printed on it or the tile
// laid over it, station tokens, and on top the targets of the seat's legal actions, a tile
// being placed and the routes being shown. The elements carry data-* attributes naming what
// they show (data-hex, data-tile, data-rotation, data-corporation, ...).
import { corporationColour, TRAIN_COLOURS } from "./colours.js";
import { HEIGHT, MARGIN, SIZE, centre, coordinateCentre, corners } from "./geometry.js";
import { round, svg, text } from "./svg.js";
import { SPOT_RADIUS, drawTrack } from "./track.js";

export class BoardMap {
  constructor(container, title, { onHexClick = () => {} } = {}) {
    this.title = title;
    this.hexes = new Map(title.hexes.map((h) => [h.coordinate, h]));
    this.tiles = new Map(title.tiles.map((t) => [t.name, t]));
    this.homes = new Map(); // hex -> corporations at home there
    for (const corporation of title.corporations) {
      const list = this.homes.get(corporation.home) || [];
      list.push(corporation);
      this.homes.set(corporation.home, list);
    }
    const columns = Math.max(...title.hexes.map((h) => h.column || 0)) + 1;
    const rows = Math.max(...title.hexes.map((h) => h.row));
    const width = 2 * MARGIN + SIZE * (1.5 * columns + 0.5);
    const height = 2 * MARGIN + ((rows + 1) * HEIGHT) / 2;
    this.root = svg("svg", {
      id: "map",
      viewBox: `0 0 ${round(width)} ${round(height)}`,
      role: "img",
      "aria-label": `Map of ${title.name}`,
    });
    this.layers = {};
    for (const name of ["coordinates", "hexes", "tokens", "targets", "spots", "preview", "routes"]) {
      this.layers[name] = svg("g", { class: `layer-${name}` });
      this.root.append(this.layers[name]);
    }
    this.#drawCoordinates(columns, rows);
    this.root.addEventListener("click", (event) => {
      const hex = event.target.closest("[data-hex]");
      if (hex) onHexClick(hex.dataset.hex);
    });
    container.replaceChildren(this.root);
    this.cities = new Map(); // hex -> [spot centres per city]
    this.levels = [...new Set((title.phases || []).map((p) => p.offboard))];
    this.state = {}; // the state document drawn last
  }

  #drawCoordinates(columns, rows) {
    const present = new Set(this.title.hexes.map((h) => h.column));
    for (let column = 0; column < columns; column += 1) {
      if (!present.has(column)) continue;
      const x = centre(column, 0).x;
      this.layers.coordinates.append(
        text(x, MARGIN - 8, String.fromCharCode(65 + column), { "text-anchor": "middle" }),
      );
    }
    for (let row = 1; row <= rows; row += 1) {
      this.layers.coordinates.append(text(8, centre(0, row).y + 4, row));
    }
  }

  // Redraws the board for a state document (GameState.state).
  render(state) {
    this.state = state;
    const board = state.board || {};
    const laid = new Map((board.tiles || []).map((t) => [t.hex, t]));
    const offboardLevel = this.#offboardLevel(state.phase);
    this.cities.clear();
    const groups = [];
    for (const mapHex of this.title.hexes) {
      const c = centre(mapHex.column || 0, mapHex.row);
      const placed = laid.get(mapHex.coordinate);
      const tile = placed ? this.tiles.get(placed.tile) : null;
      const drawing = tile ? tile.drawing : mapHex.printed;
      const rotation = placed ? placed.rotation || 0 : 0;
      const { group, cities } = drawTrack(drawing, c, rotation, corners(c), {
        offboardLevel,
        levels: this.levels,
      });
      this.cities.set(mapHex.coordinate, cities);
      const hex = svg("g", {
        class: "hex",
        dataset: {
          hex: mapHex.coordinate,
          tile: placed ? placed.tile : "",
          rotation: placed ? rotation : "",
          colour: drawing.colour || "white",
        },
      });
      hex.append(group);
      if (!drawing.label && mapHex.printed.label) {
        hex.append(text(c.x - HEIGHT * 0.38, c.y - HEIGHT * 0.18, mapHex.printed.label, { class: "label" }));
      }
      if (mapHex.name) {
        hex.append(
          text(c.x, c.y + HEIGHT * 0.44, mapHex.name, { class: "place-name", "text-anchor": "middle" }),
        );
      }
      if (mapHex.port) hex.append(text(c.x + HEIGHT * 0.28, c.y - HEIGHT * 0.22, "⚓", { class: "port" }));
      if (mapHex.privateCompany) {
        hex.append(
          text(c.x - HEIGHT * 0.1, c.y - HEIGHT * 0.3, mapHex.privateCompany, { class: "private-icon" }),
        );
      }
      if (tile) hex.append(text(c.x + SIZE * 0.55, c.y + HEIGHT * 0.3, tile.name, { class: "tile-number" }));
      hex.append(svg("title", {}, this.#describe(mapHex, placed)));
      groups.push(hex);
    }
    this.layers.hexes.replaceChildren(...groups);
    this.#drawTokens(board.tokens || []);
  }

  #describe(mapHex, placed) {
    const name = mapHex.name ? ` ${mapHex.name}` : "";
    return placed
      ? `${mapHex.coordinate}${name}: tile ${placed.tile}, rotation ${placed.rotation || 0}`
      : `${mapHex.coordinate}${name}`;
  }

  #offboardLevel(phaseName) {
    const phase = (this.title.phases || []).find((p) => p.name === phaseName);
    return phase ? phase.offboard : "";
  }

  #drawTokens(tokens) {
    const shown = [];
    const placed = new Set();
    for (const token of tokens) {
      const cities = this.cities.get(token.hex) || [];
      const spots = cities[token.city || 0] || [];
      (token.spots || []).forEach((holder, spot) => {
        if (!holder || !spots[spot]) return;
        placed.add(`${holder}@${token.hex}`);
        shown.push(this.#token(token.hex, token.city || 0, spot, holder, spots[spot], "token"));
      });
    }
    // A home spot is kept for its corporation until the home token is placed.
    for (const [hex, corporations] of this.homes) {
      for (const corporation of corporations) {
        if (placed.has(`${corporation.id}@${hex}`)) continue;
        const spots = (this.cities.get(hex) || [])[corporation.homeCity || 0] || [];
        const taken = new Set(
          tokens
            .filter((t) => t.hex === hex && (t.city || 0) === (corporation.homeCity || 0))
            .flatMap((t) => t.spots.map((h, i) => (h ? i : -1))),
        );
        const spot = spots.findIndex((_, i) => !taken.has(i));
        if (spot >= 0)
          shown.push(this.#token(hex, corporation.homeCity || 0, spot, corporation.id, spots[spot], "home"));
      }
    }
    this.layers.tokens.replaceChildren(...shown);
  }

  #token(hex, city, spot, corporation, at, kind) {
    const colour = corporationColour(corporation);
    return svg(
      "g",
      { class: kind, dataset: { hex, city, spot, corporation } },
      svg("circle", {
        cx: round(at.x),
        cy: round(at.y),
        r: SPOT_RADIUS - 1,
        fill: kind === "token" ? colour.fill : "none",
        stroke: colour.fill,
      }),
      text(at.x, at.y + 3.5, corporation, {
        "text-anchor": "middle",
        fill: kind === "token" ? colour.text : colour.fill,
      }),
    );
  }

  // Outlines the hexes where the seat may act (kind: "lay" or "token"); the selected one stands out.
  showTargets(hexes, kind, selected = "") {
    const outlines = [...hexes].map((coordinate) => {
      const c = coordinateCentre(coordinate);
      return svg("polygon", {
        class: `target target-${kind}${coordinate === selected ? " selected" : ""}`,
        points: corners(c, SIZE - 3)
          .map((p) => `${round(p.x)},${round(p.y)}`)
          .join(" "),
        dataset: { hex: coordinate, target: kind },
      });
    });
    this.layers.targets.replaceChildren(...outlines);
  }

  clearTargets() {
    this.layers.targets.replaceChildren();
    this.layers.spots.replaceChildren();
  }

  // The cities where a station token may go ({hex, city}), outlined over their spots; clicking
  // one calls onPick(hex, city) instead of the map's hex click.
  showTokenTargets(options, onPick) {
    const outlines = [];
    for (const { hex, city = 0 } of options) {
      const spots = (this.cities.get(hex) || [])[city];
      if (!spots || !spots.length) continue;
      const xs = spots.map((p) => p.x);
      const ys = spots.map((p) => p.y);
      const r = SPOT_RADIUS + 3;
      const outline = svg(
        "g",
        { class: "token-target", dataset: { hex, city } },
        svg("rect", {
          x: round(Math.min(...xs) - r),
          y: round(Math.min(...ys) - r),
          width: round(Math.max(...xs) - Math.min(...xs) + 2 * r),
          height: round(Math.max(...ys) - Math.min(...ys) + 2 * r),
          rx: r,
        }),
        svg("title", {}, `Place a station token in ${hex}${city ? ` city ${city}` : ""}`),
      );
      outline.addEventListener("click", (event) => {
        event.stopPropagation();
        onPick(hex, city);
      });
      outlines.push(outline);
    }
    this.layers.spots.replaceChildren(...outlines);
  }

  // While routes are drawn by hand every hex is a button.
  setRouteDrawing(on) {
    this.root.classList.toggle("drawing-routes", on);
  }

  // A tile being placed, drawn over its hex with that rotation.
  showPreview(coordinate, tileName, rotation) {
    const tile = this.tiles.get(tileName);
    const c = coordinateCentre(coordinate);
    if (!tile || !c) return this.clearPreview();
    const { group } = drawTrack(tile.drawing, c, rotation, corners(c));
    const preview = svg(
      "g",
      { class: "preview", dataset: { hex: coordinate, tile: tileName, rotation } },
      group,
    );
    this.layers.preview.replaceChildren(preview);
  }

  clearPreview() {
    this.layers.preview.replaceChildren();
  }

  // Routes ({train, hexes, revenue}) as lines through the centres of the hexes they visit,
  // with a dot on each hex. A route may say its `colour` and `slot` (its place among the
  // corporation's trains, so it keeps both while others change), and `broken` (drawn dashed).
  showRoutes(routes) {
    const count = Math.max(routes.length, ...routes.map((r) => (r.slot ?? 0) + 1));
    const drawn = routes.flatMap((route, index) => {
      const slot = route.slot ?? index;
      const colour = route.colour || TRAIN_COLOURS[slot % TRAIN_COLOURS.length];
      const offset = (slot - (count - 1) / 2) * 4;
      const points = (route.hexes || [])
        .map(coordinateCentre)
        .filter(Boolean)
        .map((p) => ({ x: p.x + offset, y: p.y + offset }));
      const line = svg("polyline", {
        class: route.broken ? "route broken" : "route",
        points: points.map((p) => `${round(p.x)},${round(p.y)}`).join(" "),
        stroke: colour,
        dataset: { train: route.train, hexes: (route.hexes || []).join(" "), revenue: route.revenue || 0 },
      });
      const dots = points.map((p, at) =>
        svg("circle", {
          class: "route-stop",
          cx: round(p.x),
          cy: round(p.y),
          r: at === points.length - 1 ? 5 : 3.5,
          fill: colour,
        }),
      );
      return [line, ...dots];
    });
    this.layers.routes.replaceChildren(...drawn);
  }

  clearRoutes() {
    this.layers.routes.replaceChildren();
  }
}
