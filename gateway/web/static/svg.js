// Creating SVG elements: the one place that knows the SVG namespace.
export const SVG_NS = "http://www.w3.org/2000/svg";

// An SVG element with attributes (`dataset` keys become data-* attributes) and children.
export function svg(name, attributes = {}, ...children) {
  const element = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") {
      for (const [dataKey, dataValue] of Object.entries(value)) element.dataset[dataKey] = dataValue;
    } else {
      element.setAttribute(key, value);
    }
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    element.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}

export function text(x, y, content, attributes = {}) {
  return svg("text", { x: round(x), y: round(y), ...attributes }, String(content));
}

// Coordinates written with two decimals: shorter documents, and stable for tests.
export function round(value) {
  return Math.round(value * 100) / 100;
}
