// The page-side half of package redact: given the rule's data (see
// Script), it returns functions that mirror SecretAttrs, EditableRegion
// and RemoveAll in redact.go. Keep the two in step.
(rule) => {
  const substring = new RegExp(rule.substring, "i");
  const word = new RegExp(rule.word);
  const nonWord = new RegExp(rule.nonWord, "g");
  const split = rule.split.map(([p, r]) => [new RegExp(p, "g"), r]);
  const normalize = (v) => {
    for (const [re, r] of split) v = v.replace(re, r);
    return v.toLowerCase().replace(nonWord, " ").trim();
  };
  const suggestsSecret = (v) => substring.test(v) || word.test(normalize(v));
  const fields = (v) => (v || "").toLowerCase().split(/\s+/).filter((t) => t !== "");
  return {
    placeholder: rule.placeholder,
    secretAttrs(el) {
      if ((el.getAttribute("type") || "").trim().toLowerCase() === "password") return true;
      if (fields(el.getAttribute("autocomplete")).some((t) => rule.autocomplete.includes(t))) return true;
      return rule.naming.some((k) => {
        const v = el.getAttribute(k);
        return v !== null && suggestsSecret(v);
      });
    },
    editableRegion(el) {
      const v = el.getAttribute("contenteditable");
      if (v !== null && v.trim().toLowerCase() !== "false") return true;
      return fields(el.getAttribute("role")).includes("textbox");
    },
    removeAll(text, secrets) {
      const lines = [];
      const seen = new Set();
      for (const s of secrets) {
        for (let line of s.split("\n")) {
          line = line.trim();
          if (line !== "" && line !== rule.placeholder && !seen.has(line)) {
            seen.add(line);
            lines.push(line);
          }
        }
      }
      lines.sort((a, b) => b.length - a.length);
      for (const line of lines) text = text.split(line).join(rule.placeholder);
      return text;
    },
  };
}
