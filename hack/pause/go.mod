module lorenz.local/pause

go 1.22
