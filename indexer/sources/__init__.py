"""Reading sources: files and folders into documents (text with its headings and pages marked), one module per structured format."""
