// A Copy button for a secret shown once. The Clipboard API exists only in a secure context
// (https, or localhost): on a plain-http address it is absent, so the button then selects the
// text and asks the browser to copy it, and says what happened either way, never nothing.

/** The button copying the text of element `targetId` (an id of the page's own making). */
export function copyButton(targetId: string): string {
  const script = `(async (button) => {
    const target = document.getElementById('${targetId}');
    const text = target.textContent;
    try {
      if (!navigator.clipboard) throw new Error('no clipboard here');
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      const range = document.createRange();
      range.selectNodeContents(target);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      let copied = false;
      try { copied = document.execCommand('copy'); } catch {}
      button.textContent = copied ? 'Copied' : 'Selected: press Ctrl+C (⌘C) to copy';
    }
  })(this)`;
  return `<button type="button" class="copy" onclick="${script.replace(/"/g, '&quot;').replace(/\s*\n\s*/g, ' ')}">Copy</button>`;
}
