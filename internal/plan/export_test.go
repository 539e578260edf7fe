package plan

// Quote is quote, for the tests of package plan_test.
var Quote = quote
