// The page side of infer-sim's Chromium backend. This expression evaluates
// to one function, installed in every document of the controlled tab; each
// command calls it once through Runtime.evaluate, with
// document.querySelector semantics, and decodes the JSON it answers. The
// redaction rule (package sim/redact) is applied here, so a secret value
// never leaves the page.
(() => {
  // The redaction rule of package sim/redact, put here by chrome.go: the
  // same patterns the in-memory browser applies in Go.
  const rule = /*INFER_REDACT_RULE*/ null;
  const isHTML = (el, name) => el.localName === name && el.namespaceURI === "http://www.w3.org/1999/xhtml";
  const isField = (el) => isHTML(el, "input") || isHTML(el, "textarea");
  const isSecretRegion = (el) => rule.editableRegion(el) && rule.secretAttrs(el);
  const inSecretRegion = (el) => {
    for (let e = el; e; e = e.parentElement) if (isSecretRegion(e)) return true;
    return false;
  };
  const textOf = (el) => (typeof el.innerText === "string" ? el.innerText : el.textContent || "");
  // The texts a read of root must not show: each secret region's, whole,
  // and each secret textarea's initial text (textContent shows it when
  // root is not rendered).
  const secretsUnder = (root) => {
    const out = [];
    const walk = (n) => {
      for (const c of n.children) {
        if (isSecretRegion(c)) {
          out.push(textOf(c));
          continue;
        }
        if (isHTML(c, "textarea") && rule.secretAttrs(c)) out.push(c.textContent);
        walk(c);
      }
    };
    walk(root);
    return out;
  };
  const describe = (el) => {
    let s = "<" + el.localName;
    for (const k of ["id", "name", "type", "class"]) {
      const v = el.getAttribute(k);
      if (v) {
        s += " " + k + '="' + v + '"';
        break;
      }
    }
    return s + ">";
  };
  // Cross-document navigations this document started, counted through the
  // Navigation API, so a click or an Enter can tell whether a page load
  // follows.
  const navigations = () => {
    if (!window.__inferSimNav) {
      window.__inferSimNav = { count: 0 };
      if (window.navigation) {
        navigation.addEventListener("navigate", (e) => {
          if (!e.destination.sameDocument) window.__inferSimNav.count++;
        });
      }
      addEventListener("beforeunload", () => window.__inferSimNav.count++);
    }
    return window.__inferSimNav.count;
  };
  const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
  const stamp = (out) => {
    out.url = location.href;
    out.title = document.title;
    if (!out.title) {
      out.title = /^https?:$/.test(location.protocol) ? location.href.slice(location.protocol.length + 2) : location.href;
    }
    return out;
  };
  const read = (a, out) => {
    let el;
    if (a.selector === "") {
      el = document.body;
      if (!el) {
        out.content = "";
        return stamp(out);
      }
    } else {
      el = document.querySelector(a.selector);
    }
    if (!el) {
      out.missing = true;
      return stamp(out);
    }
    if (isField(el)) out.content = rule.secretAttrs(el) ? rule.placeholder : el.value;
    else if (inSecretRegion(el)) out.content = rule.placeholder;
    else out.content = rule.removeAll(textOf(el), secretsUnder(el));
    return stamp(out);
  };
  const click = async (el, out) => {
    const before = navigations();
    el.click();
    await tick();
    out.navigating = navigations() > before;
    return stamp(out);
  };
  const type = (el, a, out) => {
    if (isHTML(el, "input")) {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(el, a.text);
    } else if (isHTML(el, "textarea")) {
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set.call(el, a.text);
    } else if (isHTML(el, "select")) {
      el.value = a.text;
    } else if (el.isContentEditable) {
      el.textContent = a.text;
    } else {
      out.notEditable = describe(el);
      return stamp(out);
    }
    el.focus();
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    out.navigations = navigations();
    return stamp(out);
  };
  const settle = async (out) => {
    await tick();
    out.navigations = navigations();
    return stamp(out);
  };

  // The entry point. It answers with JSON, synchronously unless the action
  // has to let the page run first (click, settle).
  const answer = (out) => (out instanceof Promise ? out.then((o) => JSON.stringify(o)) : JSON.stringify(out));
  return (a) => answer(run(a));
  function run(a) {
    const out = {};
    try {
      switch (a.action) {
        case "info":
          return stamp(out);
        case "settle":
          return settle(out);
        case "read":
          return read(a, out);
        case "click":
        case "type": {
          const el = document.querySelector(a.selector);
          if (!el) {
            out.missing = true;
            return stamp(out);
          }
          return a.action === "click" ? click(el, out) : type(el, a, out);
        }
      }
      out.error = "unknown action: " + a.action;
    } catch (e) {
      out.error = e.message;
    }
    return stamp(out);
  }
})()
