// Markdown for the model's answers: react-markdown (mdast → React elements, no
// dangerouslySetInnerHTML, no eval, so it runs under the page's CSP) with GitHub-flavoured tables,
// task lists and strikethrough. Raw HTML in the text is dropped, links open outside the window, and
// images render as their alt text (the CSP would block remote images anyway).
import { memo } from 'react';
import Markdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';

const REMARK_PLUGINS = [remarkGfm];

const COMPONENTS: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noreferrer noopener" />,
  img: ({ alt }) => <span className="chat-md__image">{alt ? `[image: ${alt}]` : '[image]'}</span>,
  table: ({ node: _node, ...props }) => (
    <div className="chat-md__table">
      <table {...props} />
    </div>
  ),
};

export const ChatMarkdown = memo(function ChatMarkdown({ text }: { text: string }) {
  return (
    <div className="chat-md">
      <Markdown remarkPlugins={REMARK_PLUGINS} components={COMPONENTS} skipHtml>
        {text}
      </Markdown>
    </div>
  );
});
