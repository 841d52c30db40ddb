"""svmmap: structural SVMs that directly optimise Mean Average Precision."""
