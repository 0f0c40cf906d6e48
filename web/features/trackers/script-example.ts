// An insertable example of a tracker script (plain data, so the example lists stay free of React and can be
// checked by tests: components/code-editor/examples-compile.test.ts).
export interface ScriptExample {
  label: string;
  code: string;
}
