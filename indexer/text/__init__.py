"""From a document's text to what is embedded: sentences, token-bounded chunks, and each sentence placed in its document."""
