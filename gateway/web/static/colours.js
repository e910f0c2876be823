// How things look: the corporations' colours and the tile colours. Presentation only; what is
// where comes from the title data (TitleService) and the game's state.
export const CORPORATION_COLOURS = {
  AR: { fill: "#37383a", text: "#ffffff" },
  IR: { fill: "#f48221", text: "#000000" },
  SR: { fill: "#76a042", text: "#000000" },
  KO: { fill: "#d81e3e", text: "#ffffff" },
  TR: { fill: "#00a993", text: "#000000" },
  KU: { fill: "#0189d1", text: "#ffffff" },
  UR: { fill: "#7b352a", text: "#ffffff" },
};

export function corporationColour(id) {
  return CORPORATION_COLOURS[id] || { fill: "#888888", text: "#ffffff" };
}

export const TILE_COLOURS = {
  white: "#f4efe1",
  yellow: "#f6df4b",
  green: "#6ebf5b",
  brown: "#c08a52",
  gray: "#b9b9b9",
  red: "#d8483a",
};

export const TRAIN_COLOURS = ["#e6194b", "#4363d8", "#911eb4", "#f58231", "#3cb44b", "#42d4f4"];
