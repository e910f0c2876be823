// The tiles as pictures: the tiles that may go on a chosen hex (each drawn from the title's
// tile data in its colour, with its number and how many are left), and the supply of every
// tile. What is left is the title's count (with the beginner game's extra tiles) less the
// tiles on the board: a replaced tile returns to the supply, so the board alone says it.
import { h } from "./html.js";
import { HEIGHT, SIZE, corners } from "./geometry.js";
import { svg, text } from "./svg.js";
import { drawTrack } from "./track.js";

// How many of each tile are left in the supply, by tile name.
export function tilesLeft(title, state) {
  const left = new Map();
  for (const tile of title.tiles || []) {
    left.set(tile.name, (tile.count || 0) + (state.beginner_game ? tile.beginnerExtra || 0 : 0));
  }
  for (const laid of (state.board || {}).tiles || []) {
    if (left.has(laid.tile)) left.set(laid.tile, left.get(laid.tile) - 1);
  }
  return left;
}

// One tile as a small SVG picture at a rotation.
export function tilePicture(tile, { rotation = 0, width = 56, numbered = true } = {}) {
  const c = { x: SIZE, y: HEIGHT / 2 };
  const { group } = drawTrack(tile.drawing, c, rotation, corners(c));
  return svg(
    "svg",
    {
      class: "tile-picture",
      viewBox: `-2 -2 ${2 * SIZE + 4} ${HEIGHT + 4}`,
      width,
      height: Math.round((width * (HEIGHT + 4)) / (2 * SIZE + 4)),
      role: "img",
      "aria-label": `tile ${tile.name}`,
    },
    group,
    numbered
      ? text(SIZE * 1.55, HEIGHT * 0.85, tile.name, { class: "tile-number", "text-anchor": "middle" })
      : null,
  );
}

// The tiles that may go on the chosen hex: one button per tile (and private, for a lay
// through an ability), the chosen one drawn at the rotation being previewed.
// choices: [{tile, company, rotation}] (the first legal rotation of each).
export function tileChoices({ choices, tiles, left, chosen, onChoose }) {
  return h(
    "div",
    { class: "tile-choices" },
    choices.map((choice) => {
      const tile = tiles.get(choice.tile);
      const isChosen = chosen && chosen.tile === choice.tile && chosen.company === choice.company;
      const rotation = isChosen ? chosen.rotation : choice.rotation;
      const count = left.get(choice.tile) ?? 0;
      return h(
        "button",
        {
          type: "button",
          class: `tile-choice${isChosen ? " chosen" : ""}`,
          title: `Tile ${choice.tile}${choice.company ? ` (${choice.company})` : ""}: ${count} left`,
          dataset: {
            control: "tile",
            tile: choice.tile,
            company: choice.company,
            left: count,
            colour: tile ? tile.drawing.colour || "" : "",
          },
          onclick: () => onChoose(choice),
        },
        tile ? tilePicture(tile, { rotation }) : null,
        h(
          "span",
          { class: "tile-caption" },
          `${choice.tile}${choice.company ? ` (${choice.company})` : ""} · ${count} left`,
        ),
      );
    }),
  );
}

// Every tile of the title with how many are left, as a grid of pictures.
export function supplyPanel({ title, left, open, onToggle }) {
  const tiles = [...(title.tiles || [])];
  const total = tiles.reduce((sum, t) => sum + Math.max(0, left.get(t.name) ?? 0), 0);
  const panel = h(
    "details",
    { id: "tile-supply", open },
    h("summary", {}, `Tiles (${total} left in the supply)`),
    h(
      "div",
      { class: "tile-supply-grid" },
      tiles.map((tile) => {
        const count = left.get(tile.name) ?? 0;
        return h(
          "div",
          {
            class: `tile-supply-item${count > 0 ? "" : " none-left"}`,
            title: `Tile ${tile.name}: ${count} left`,
            dataset: { tile: tile.name, left: count, colour: tile.drawing.colour || "" },
          },
          tilePicture(tile, { width: 44, numbered: false }),
          h("span", { class: "tile-left" }, `${tile.name} ×${count}`),
        );
      }),
    ),
  );
  panel.addEventListener("toggle", () => onToggle(panel.open));
  return panel;
}
