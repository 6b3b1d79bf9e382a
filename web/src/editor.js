// The Cypher editor: Neo4j's CodeMirror 6 Cypher support (highlighting,
// bracket matching, completion from the database's schema, syntax lint)
// plus a mark for the position of an error the server reported.
import { createCypherEditor } from "@neo4j-cypher/codemirror";
import "@neo4j-cypher/codemirror/css/cypher-codemirror.css";
import { StateEffect, StateField, Prec } from "@codemirror/state";
import { Decoration, EditorView, keymap } from "@codemirror/view";

const setServerError = StateEffect.define();

const serverErrorField = StateField.define({
  create: () => Decoration.none,
  update(marks, tr) {
    if (tr.docChanged) marks = Decoration.none;
    for (const effect of tr.effects) {
      if (effect.is(setServerError)) marks = effect.value ? markFor(tr.state.doc, effect.value) : Decoration.none;
    }
    return marks;
  },
  provide: (field) => EditorView.decorations.from(field),
});

function markFor(doc, { from, message }) {
  if (doc.length === 0) return Decoration.none;
  from = Math.max(0, Math.min(from, doc.length - 1));
  let to = from + 1;
  // Mark the whole word the error points at, when it points at one.
  const line = doc.lineAt(from);
  const rest = line.text.slice(from - line.from);
  const word = /^[\w$`]+/.exec(rest);
  if (word) to = from + word[0].length;
  return Decoration.set([
    Decoration.line({ class: "cm-server-error-line" }).range(line.from),
    Decoration.mark({ class: "cm-server-error", attributes: { title: message, "data-testid": "error-marker" } }).range(
      from,
      Math.min(to, doc.length),
    ),
  ]);
}

/** The editor and what the page does with it. */
export class Editor {
  constructor(parent, { value, onRun, onHistory }) {
    const keys = Prec.highest(
      keymap.of([
        { key: "Mod-Enter", run: () => (onRun(), true) },
        { key: "Shift-Enter", run: () => (onRun(), true) },
        { key: "Mod-ArrowUp", run: () => (onHistory(-1), true) },
        { key: "Mod-ArrowDown", run: () => (onHistory(1), true) },
      ]),
    );
    this.api = createCypherEditor(parent, {
      value,
      autocomplete: true,
      autocompleteCloseOnBlur: true,
      bracketMatching: true,
      closeBrackets: true,
      history: true,
      lineNumbers: true,
      lineWrapping: true,
      lint: true,
      theme: "light",
      tooltipAbsolute: true,
      placeholder: "MATCH (n) RETURN n LIMIT 25",
      postExtensions: [serverErrorField, keys],
    }).editor;
    this.view = this.api.codemirror;
  }

  /** The statement text. */
  get value() {
    return this.view.state.doc.toString();
  }

  set value(text) {
    this.api.setValue(text);
  }

  focus() {
    this.api.focus();
  }

  /** Gives completion the database's labels, types, keys, procedures and functions. */
  setSchema(schema) {
    this.api.setSchema(schema);
  }

  /** Marks the position of a server error (`{ line, column }` or `{ offset }`), or clears it with `null`. */
  markError(position, message) {
    if (!position) {
      this.view.dispatch({ effects: setServerError.of(null) });
      return;
    }
    const doc = this.view.state.doc;
    let from;
    if (position.offset !== undefined) from = position.offset;
    else {
      const lineNo = Math.max(1, Math.min(position.line, doc.lines));
      const line = doc.line(lineNo);
      from = line.from + Math.max(0, Math.min(position.column - 1, line.length));
    }
    this.view.dispatch({
      effects: setServerError.of({ from, message }),
      selection: { anchor: Math.min(from, doc.length) },
      scrollIntoView: true,
    });
  }
}
