/** What an element may hold: nodes and text (text is always a text node, never parsed as HTML). */
export type Child = Node | string | number | null | undefined | false;

type Attrs = Record<string, string | boolean | undefined | ((event: Event) => void)>;

/**
 * Creates an element: `on<event>` keys add listeners, `true` sets a boolean attribute, strings set attributes.
 * Children are appended as nodes or text nodes; nothing is ever assigned to innerHTML.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, value);
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** Says something to screen readers (the polite live region). */
export function announce(text: string): void {
  const region = document.getElementById("announcer");
  if (region) region.textContent = text;
}
