<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>php page</title>
</head>
<body><h1>php page</h1>
<p>This tricky fixture page tests one case: php page.</p>
</body></html>
