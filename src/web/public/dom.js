/* global document -- browser globals (this file runs in the page) */
// DOM helpers shared by the play page and the QA inspector (served at /dom.js).

/** The first element matching `selector` (under `root`). */
export const $ = (selector, root = document) => root.querySelector(selector);

/** An element with attributes, `class`, `dataset`, `on<event>` listeners and children. */
export const el = (tag, props = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') node.className = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? '' : v);
  }
  for (const child of children.flat()) if (child !== undefined && child !== null) node.append(child);
  return node;
};
