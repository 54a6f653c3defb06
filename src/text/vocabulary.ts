// Word lists the formatter consults: calendar names, a modest list of proper nouns, units and currencies, and the
// function words that steer punctuation. All lower case. Kept deliberately small and unambiguous: a word that is
// also a common English word ("will", "mark", "bill", "turkey", "polish") is not in the name lists.

const set = (s: string): ReadonlySet<string> => new Set(s.split(/\s+/).filter(Boolean));

export const MONTHS: readonly string[] = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
export const MONTH_SET: ReadonlySet<string> = new Set(MONTHS);
/** Months that are also common words ("may I", "they march"): capitalised only in a date context. */
export const AMBIGUOUS_MONTHS: ReadonlySet<string> = set('may march');
/** Words before an ambiguous month that make it a month ("in may", "since march"). */
export const MONTH_CONTEXT: ReadonlySet<string> = set('in of since until till by from early late mid during through next last');

export const WEEKDAYS: ReadonlySet<string> = set('monday tuesday wednesday thursday friday saturday sunday');

/** First names and place, nationality and language names that are capitalised anywhere. */
export const PROPER_NOUNS: ReadonlySet<string> = set(`
  john james robert michael david richard joseph thomas charles christopher daniel matthew anthony steven paul
  andrew joshua kevin brian george edward ronald timothy jason jeffrey ryan jacob gary nicholas eric jonathan
  stephen larry justin scott brandon benjamin samuel gregory alexander patrick dennis peter henry
  mary patricia jennifer linda elizabeth barbara susan jessica sarah karen nancy lisa margaret betty sandra ashley
  dorothy kimberly emily donna michelle amanda melissa deborah stephanie rebecca laura sharon cynthia
  kathleen amy shirley angela helen anna brenda pamela nicole emma samantha katherine christine debra rachel
  catherine carolyn janet maria diane julie joyce victoria kelly christina lauren joan evelyn olivia
  judith megan cheryl martha andrea hannah jacqueline ann alice julia jean sophia isabella charlotte sophie
  oliver harry william alex sam tom tim dave steve chris kate jane lucy susie
  america american americans england english britain british europe european africa african asia asian
  australia australian canada canadian mexico mexican china chinese japan japanese india indian germany german
  germans france french italy italian spain spanish portugal portuguese russia russian brazil brazilian
  ireland irish scotland scottish wales welsh greece greek egypt egyptian israel korea korean vietnam
  sweden swedish norway norwegian denmark danish finland finnish poland netherlands dutch belgium switzerland swiss
  austria austrian argentina chile peru colombia cuba pakistan iran iraq afghanistan ukraine nigeria kenya
  london paris berlin rome madrid tokyo beijing moscow chicago boston seattle houston dallas denver atlanta miami
  philadelphia washington california texas florida ohio virginia oregon arizona nevada colorado michigan
  toronto vancouver sydney melbourne dublin amsterdam vienna prague istanbul cairo mumbai delhi shanghai
  christmas easter thanksgiving halloween google microsoft amazon facebook youtube
  arabic hindi latin mandarin cantonese
`);

/** Multi-word proper nouns, capitalised word by word when the whole sequence occurs. */
export const PROPER_PHRASES: readonly (readonly string[])[] = `
  new york|new jersey|new zealand|new mexico|new orleans|new hampshire|new delhi|los angeles|san francisco|san diego
  las vegas|hong kong|united states|united kingdom|united nations|south africa|north america|south america
  north carolina|south carolina|north korea|south korea|saudi arabia|costa rica|puerto rico|sri lanka
  rhode island|west virginia|salt lake city|st louis|buenos aires|rio de janeiro|el salvador|middle east
  new year's|new year|mother's day|father's day|valentine's day
`
  .split(/[|\n]/)
  .map((p) => p.trim().split(/\s+/))
  .filter((p) => p.length > 1 && p[0] !== '');

/** Spoken titles and the abbreviation they become. */
export const TITLES: ReadonlyMap<string, string> = new Map([
  ['mister', 'Mr.'],
  ['mr', 'Mr.'],
  ['mr.', 'Mr.'],
  ['missus', 'Mrs.'],
  ['mrs', 'Mrs.'],
  ['mrs.', 'Mrs.'],
  ['ms.', 'Ms.'],
  ['dr.', 'Dr.'],
]);
/** Titles that are also ordinary words: abbreviated only before a name from PROPER_NOUNS ("doctor john"). */
export const WEAK_TITLES: ReadonlyMap<string, string> = new Map([
  ['doctor', 'Dr.'],
  ['ms', 'Ms.'],
]);
/**
 * "misses" is usually the verb ("she misses john"): it becomes "Mrs." only at the start of a sentence or after one
 * of these words, and only before another word ("call misses smith").
 */
export const MISSES_CONTEXT: ReadonlySet<string> = set(`
  and with to for dear hello hi thanks thank ask asked tell told call called meet met see saw by from is was
`);

/** Currency words after a number. `symbol` goes before the number; `minor` names the hundredth part. */
export const CURRENCIES: ReadonlyMap<string, { symbol: string; singular: boolean }> = new Map([
  ['dollars', { symbol: '$', singular: false }],
  ['dollar', { symbol: '$', singular: true }],
  ['bucks', { symbol: '$', singular: false }],
  ['euros', { symbol: '€', singular: false }],
  ['euro', { symbol: '€', singular: true }],
]);
export const CENTS: ReadonlySet<string> = set('cents cent');

/** Units after which a number below ten is still written in digits ("5 miles", "3 kg"). */
export const UNITS: ReadonlySet<string> = set(`
  degrees degree miles mile kilometers kilometres kilometer kilometre km meters metres meter metre centimeters
  centimetres millimeters millimetres feet inches yards pounds pound lbs ounces ounce oz kilograms kilogram kilos
  kilo kg grams gram liters litres liter litre gallons gallon mph kph gigabytes gigabyte megabytes megabyte gb mb
  terabytes tb bytes volts volt watts watt kilowatts kilowatt hertz kilohertz megahertz gigahertz celsius
  fahrenheit
`);

/** Words before a clock time that make "seven thirty" a time without "a m"/"p m". */
export const TIME_CONTEXT: ReadonlySet<string> = set('at by until till til around before after from since past');
/** Words before a year-like number that make "eleven fifty" a year rather than two numbers. */
export const YEAR_CONTEXT: ReadonlySet<string> = set('in since year of circa until till before after from');

/** Meridiem spellings the recognizer may give, one or two tokens. */
export const MERIDIEM: readonly { words: readonly string[]; text: string }[] = [
  { words: ['a.m.'], text: 'AM' },
  { words: ['p.m.'], text: 'PM' },
  { words: ['am'], text: 'AM' },
  { words: ['pm'], text: 'PM' },
  { words: ['a', 'm'], text: 'AM' },
  { words: ['p', 'm'], text: 'PM' },
  { words: ['a.', 'm.'], text: 'AM' },
  { words: ['p.', 'm.'], text: 'PM' },
];

// --- Punctuation ---------------------------------------------------------------------------------------------------

/** A sentence does not end after these (a pause after "the" is hesitation, not a full stop). */
export const CONTINUATION: ReadonlySet<string> = set(`
  a an the my your his our their its and or but nor because of to uh um er erm ah than whose very
`);
/** No comma after these: the clause cannot end there. */
export const NO_COMMA_AFTER: ReadonlySet<string> = set(`
  a an the my your his her our their its this these those and or but nor because if whether of to in on at for
  with from by about into onto than as i he she we they i'm you're we're they're he's she's it's that's there's
  i've you've we've they've i'll you'll we'll they'll he'll she'll i'd you'd we'd they'd is are was were am be
  been being do does did have has had will would can could should shall may might must not don't doesn't didn't
  can't won't isn't aren't wasn't weren't uh um er erm ah mr. mrs. ms. dr. very so such per
`);

/** Sentence openers that do not decide the mood ("so", "well"): skipped before the question test. */
export const DISCOURSE_OPENERS: ReadonlySet<string> = set('so and but well okay ok now oh hey um uh then also alright right yeah yes');
/** Wh-words that open a question when an auxiliary follows them closely ("what time is it"). */
export const WH_WORDS: ReadonlySet<string> = set('what where when why how which');
/** Always interrogative at the start of a sentence. */
export const WH_ALWAYS: ReadonlySet<string> = set(`
  who whom whose what's where's who's how's why's when's whats wheres whos hows
`);
/** Two-word openers that make a question without an auxiliary ("how about", "what if"). */
export const QUESTION_BIGRAMS: ReadonlySet<string> = set('how_about what_about what_if why_not how_come how_many how_much');
/** Auxiliaries and modals that, sentence-initial and followed by a subject, invert into a question. */
export const AUXILIARIES: ReadonlySet<string> = set(`
  is are was were am do does did can could will would should shall may might must have has had
  isn't aren't wasn't weren't don't doesn't didn't can't couldn't won't wouldn't shouldn't haven't hasn't hadn't
`);
/** Auxiliaries that also open imperatives ("do it now", "have a seat"): a personal pronoun must follow. */
export const IMPERATIVE_AUXILIARIES: ReadonlySet<string> = set("do don't have");
export const PERSONAL_PRONOUNS: ReadonlySet<string> = set('i you he she we they');
/** Subjects that may follow an inverted auxiliary ("is the", "can anyone"). */
export const SUBJECTS: ReadonlySet<string> = set(`
  i you he she it we they there this that these those the a an my your his her our their its anyone anybody
  someone somebody everyone everybody everything anything something nothing no any all
`);
