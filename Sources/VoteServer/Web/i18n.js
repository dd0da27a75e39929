// Every word the pages show, in English and Korean. The language follows the browser's until the visitor
// picks one with the switch; the choice is kept in localStorage (only the language code) for the next visit.

const strings = {
    en: {
        app: 'VoteLedger', nav: 'Main', home: 'Places', results: 'Results', booth: 'Vote', audit: 'Check a receipt',
        authority: 'Authority', language: 'Language', loading: 'Loading…', retry: 'Try again',
        unreachable: 'The server cannot be reached. Check your connection and try again.',
        'status.voting': 'Voting now', 'status.registration': 'Registration open', 'status.waiting': 'Waiting for voting',
        'status.upcoming': 'Upcoming', 'status.ended': 'Ended', noPlaces: 'No places yet.',
        registration: 'Registration', voting: 'Voting', window: '{start} to {end}',
        'next.registration_start': 'Registration opens in {time}', 'next.registration_end': 'Registration closes in {time}',
        'next.voting_start': 'Voting opens in {time}', 'next.voting_end': 'Voting closes in {time}', 'next.none': 'Voting has ended',
        days: '{n} d', hours: '{n} h', minutes: '{n} min', seconds: '{n} s',
        candidates: 'Candidates', noCandidates: 'No candidates registered yet.', withdrawn: 'withdrawn',
        turnout: 'Turnout: {voted} of {authorized} voters ({percent})', votePlace: 'Vote in this place',
        seeResults: 'See the results', placeNumber: 'Place {id}', candidateNumber: 'Candidate {id}',
        // Booth
        boothTitle: 'Vote in {place}', boothPick: 'Choose a place where voting is open:', noVoting: 'No place is open for voting now.',
        token: 'Your voting token', tokenHelp: '33 letters and digits as you received them; spaces, dashes and case do not matter.',
        tokenBad: 'This does not look like a voting token: it has 33 letters A–Z and digits 2–7.',
        tokenMistyped: 'This token has a typo: a character is wrong or two are swapped. Compare it with your letter.',
        choose: 'Your choice', chooseMissing: 'Choose a candidate.', next: 'Continue', back: 'Go back',
        confirmTitle: 'Confirm your vote', confirmText: 'You are voting for {candidate} in {place}. A vote cannot be changed.',
        cast: 'Cast my vote', casting: 'Casting your vote…',
        castTitle: 'Your vote is recorded', castText: 'Your vote is in block {height} of the ledger, as event {index}.',
        eventHash: 'Event hash', block: 'Block', eventIndex: 'Event index', downloadReceipt: 'Download your receipt (.tlog-proof)',
        receiptHelp: 'Keep the receipt: with it anyone can check that your vote is in the ledger and was never changed.',
        checkNow: 'Check this receipt now',
        'refuse.already_voted': 'This token has already been used to vote. Each token votes once.',
        'refuse.not_open': 'Voting in this place is not open yet.', opensAt: 'Voting opens {time}.',
        checking: 'Checking your token…', 'refuse.closed': 'Voting in this place has closed.',
        'refuse.token_not_authorized': 'This token is not known for this place. Check it and try again.',
        'refuse.malformed_token': 'This does not look like a voting token: it has 33 letters A–Z and digits 2–7.',
        'refuse.token_mistyped': 'This token has a typo: a character is wrong or two are swapped. Compare it with your letter.',
        'refuse.candidate_withdrawn': 'This candidate has withdrawn. Go back and choose another.',
        'refuse.candidate_not_found': 'This candidate does not exist in this place.',
        'refuse.place_not_found': 'This place does not exist.',
        'refuse.busy': 'The server is busy. Your vote was not recorded; please try again in a moment.',
        'refuse.other': 'The vote was refused: {message}',
        // Anonymous booth
        issuanceCode: 'Your issuance code',
        issuanceCodeHelp: '33 letters and digits as you received them; spaces, dashes and case do not matter. It gets you a ballot credential once.',
        codeBad: 'This does not look like an issuance code: it has 33 letters A–Z and digits 2–7.',
        codeMistyped: 'This code has a typo: a character is wrong or two are swapped. Compare it with your letter.',
        checkingCode: 'Checking your code…',
        anonymousIntro: 'This place uses anonymous ballots: your code gets a ballot credential that the server signs without seeing it, and your vote is cast with the credential alone, so no one, not even the authority, can tell it was yours.',
        credentialFile: 'Or cast with a ballot credential you saved',
        credentialOtherPlace: 'This credential file is not for this place.',
        credentialBad: 'This ballot credential is not valid for this place.',
        credentialKept: 'A ballot credential for this place is kept on this device. Choose, and cast it.',
        getCredential: 'Get my ballot credential and vote', gettingCredential: 'Getting your ballot credential…',
        anonymousConfirm: 'Your browser now makes a secret ballot credential and has the server sign it without seeing it.',
        credentialTitle: 'Your ballot credential is ready',
        credentialReady: 'The server signed your ballot credential. Your vote has not been cast yet.',
        credentialWarning: 'Save your ballot credential now. It is kept on this device until your vote is cast; if it is lost before then, it is lost for good: no second credential can be issued for your code.',
        saveCredential: 'Save my ballot credential',
        waitWhy: 'The booth waits a random time before casting, so the server cannot match your credential to you by time.',
        castingIn: 'Your vote will be cast in {seconds} s.',
        comeBack: 'You can also close this page and come back later: the booth casts the credential kept on this device, or one you saved.',
        anonymousProves: 'What this receipt proves',
        anonymousProvesText: 'Your ballot is on the ledger in this block, signed under this place\'s key, and counted; anyone can check with this receipt that it was never changed or removed.',
        anonymousNotProves: 'What it does not show',
        anonymousNotProvesText: 'Who cast it. The ballot carries a credential the server signed without seeing, and nothing on the ledger or in this receipt ties it to your code or to you.',
        'refuse.credential_already_issued': 'A ballot credential has already been issued for this code. If it was lost, ask the authority for a new code; a lost credential cannot be replaced.',
        'refuse.credential_already_voted': 'This ballot credential has already voted. Each credential votes once.',
        'refuse.invalid_ballot_signature': 'This ballot credential is not valid for this place.',
        'refuse.not_anonymous': 'This place does not use anonymous ballots.',
        'refuse.code_not_authorized': 'This code is not known for this place. Check it and try again.',
        'refuse.issuance_closed': 'Voting in this place has closed.',
        // Results
        resultsTitle: 'Results of {place}', soFar: 'So far (voting is open; this page updates by itself)',
        certifiedAt: 'Certified at block {height}',
        embargoed: 'The counts are hidden until voting ends ({time}).', notCertified: 'Voting has closed; the results are not certified yet.',
        notStarted: 'Voting has not started.', vote: '{n} vote', votes: '{n} votes', chart: 'Votes per candidate', share: 'Share',
        count: 'Votes', candidate: 'Candidate', resultsPick: 'Choose a place:',
        // Audit
        auditTitle: 'Check a vote receipt', auditIntro: 'Your browser checks the receipt itself, with the authority\'s key: nothing here trusts the server\'s word.',
        receipt: 'Receipt (.tlog-proof text)', receiptFile: 'Or open a receipt file', key: 'Authority verifier key',
        keyHelp: 'Compare it with the key the authority published elsewhere (a notice, a newspaper). You can edit it.',
        againstHead: 'Also check that the ledger the server holds now still contains this receipt\'s history',
        verify: 'Verify', verifying: 'Checking…', 'check.format': 'The receipt can be read',
        'check.key': 'The verifier key is well formed', 'check.signature': 'The receipt\'s head is signed by the authority',
        'check.inclusion': 'The vote is included under that head (SHA-256 leaf and RFC 9162 inclusion proof)',
        'check.head': 'The server\'s current head is signed by the authority',
        'check.consistency': 'The current ledger extends the receipt\'s head (RFC 9162 consistency proof)',
        pass: 'pass', fail: 'FAIL', skip: 'not checked', auditOk: 'The receipt is valid.',
        auditBad: 'The receipt does not verify.',
        altered: 'The receipt does not verify: the vote is not included under its head, so the receipt was altered.',
        notSigned: 'The receipt does not verify: its head is not signed by this authority key (forged, or the wrong key).', rewritten: 'The ledger was rewritten: the server\'s current ledger does not contain the history this receipt was signed under.',
        auditEvent: 'A vote in place {place} for candidate {candidate}, event {index}, under a signed head of {size} events (block {height}).',
        auditHead: 'The server\'s ledger now holds {size} events.',
        // Authority
        authTitle: 'Authority console', adminToken: 'Admin token', signIn: 'Sign in', signOut: 'Sign out',
        adminHelp: 'The token stays in this tab\'s memory only; closing or reloading the tab signs you out.',
        badAdmin: 'The admin token was refused. Sign in again.', headTitle: 'Current head', headTime: 'Signed {time}', refresh: 'Refresh',
        createPlace: 'Create a place', name: 'Name', description: 'Description', regStart: 'Registration starts',
        regEnd: 'Registration ends', voteStart: 'Voting starts', voteEnd: 'Voting ends', maxCandidates: 'At most this many candidates (empty: no limit)',
        resultsAfterClose: 'Hide the counts from the public until voting ends',
        anonymousBallots: 'Anonymous ballots: voters get issuance codes, and no one can tie a vote to a voter',
        create: 'Create', created: 'Created place {id}.', managePlace: 'Manage a place', place: 'Place',
        registerCandidate: 'Register a candidate', pledge: 'Pledge', register: 'Register', registered: 'Registered candidate {id}.',
        withdrawCandidate: 'Withdraw a candidate', withdraw: 'Withdraw', withdrawnDone: 'Candidate {id} withdrew.',
        authorizeOne: 'Authorise one voter', voter: 'Voter identity', authorize: 'Authorise',
        tokenOnce: 'Voting token for this voter (shown once; hand it over now): {token}',
        reissueOne: 'Re-issue a lost token', reissue: 'Issue a new token',
        reissueHelp: 'For an authorised voter who has not voted: a new token replaces the old one, which stops working.',
        reissuedOnce: 'New voting token for this voter (shown once; the old one no longer works): {token}',
        authorizeCsv: 'Authorise voters from a CSV file (one identity per line)', csvFile: 'CSV file', upload: 'Authorise all',
        'csvDone.one': '1 voter authorised; the token was downloaded once as {file}.',
        'csvDone.other': '{n} voters authorised; their tokens were downloaded once as {file}.',
        'csvRefused.one': '1 line was refused.', 'csvRefused.other': '{n} lines were refused.',
        csvLine: 'line {line}: {message}', certify: 'Certify the results', certifyButton: 'Certify', certified: 'Results certified at block {height}.',
        failed: 'Refused: {message}',
    },
    ko: {
        app: 'VoteLedger', nav: '주 메뉴', home: '투표소', results: '결과', booth: '투표하기', audit: '영수증 확인',
        authority: '관리자', language: '언어', loading: '불러오는 중…', retry: '다시 시도',
        unreachable: '서버에 연결할 수 없습니다. 연결을 확인하고 다시 시도하세요.',
        'status.voting': '투표 중', 'status.registration': '후보 등록 중', 'status.waiting': '투표 대기',
        'status.upcoming': '예정', 'status.ended': '종료', noPlaces: '아직 투표소가 없습니다.',
        registration: '후보 등록', voting: '투표', window: '{start} ~ {end}',
        'next.registration_start': '{time} 후 후보 등록 시작', 'next.registration_end': '{time} 후 후보 등록 마감',
        'next.voting_start': '{time} 후 투표 시작', 'next.voting_end': '{time} 후 투표 마감', 'next.none': '투표가 끝났습니다',
        days: '{n}일', hours: '{n}시간', minutes: '{n}분', seconds: '{n}초',
        candidates: '후보', noCandidates: '아직 등록된 후보가 없습니다.', withdrawn: '사퇴',
        turnout: '투표율: 유권자 {authorized}명 중 {voted}명 ({percent})', votePlace: '이 투표소에서 투표하기',
        seeResults: '결과 보기', placeNumber: '투표소 {id}', candidateNumber: '후보 {id}',
        boothTitle: '{place} 투표', boothPick: '투표가 열린 투표소를 고르세요:', noVoting: '지금 투표가 열린 투표소가 없습니다.',
        token: '투표 토큰', tokenHelp: '받은 그대로 33자의 문자와 숫자. 띄어쓰기, 대시, 대소문자는 상관없습니다.',
        tokenBad: '투표 토큰 형식이 아닙니다. 토큰은 영문자 A–Z와 숫자 2–7로 된 33자입니다.',
        tokenMistyped: '토큰에 오타가 있습니다. 한 글자가 틀렸거나 두 글자의 순서가 바뀌었습니다. 받은 안내문과 비교해 보세요.',
        choose: '선택', chooseMissing: '후보를 고르세요.', next: '계속', back: '뒤로',
        confirmTitle: '투표 확인', confirmText: '{place}에서 {candidate}에게 투표합니다. 투표는 바꿀 수 없습니다.',
        cast: '투표하기', casting: '투표를 기록하는 중…',
        castTitle: '투표가 기록되었습니다', castText: '투표가 원장의 블록 {height}에 이벤트 {index}(으)로 기록되었습니다.',
        eventHash: '이벤트 해시', block: '블록', eventIndex: '이벤트 번호', downloadReceipt: '영수증 내려받기 (.tlog-proof)',
        receiptHelp: '영수증을 보관하세요. 누구나 이것으로 투표가 원장에 있고 바뀌지 않았음을 확인할 수 있습니다.',
        checkNow: '지금 이 영수증 확인하기',
        'refuse.already_voted': '이 토큰으로 이미 투표했습니다. 토큰 하나로 한 번만 투표할 수 있습니다.',
        'refuse.not_open': '이 투표소의 투표가 아직 시작되지 않았습니다.', opensAt: '투표 시작: {time}',
        checking: '토큰을 확인하는 중…', 'refuse.closed': '이 투표소의 투표가 마감되었습니다.',
        'refuse.token_not_authorized': '이 투표소에 등록되지 않은 토큰입니다. 확인하고 다시 시도하세요.',
        'refuse.malformed_token': '투표 토큰 형식이 아닙니다. 토큰은 영문자 A–Z와 숫자 2–7로 된 33자입니다.',
        'refuse.token_mistyped': '토큰에 오타가 있습니다. 한 글자가 틀렸거나 두 글자의 순서가 바뀌었습니다. 받은 안내문과 비교해 보세요.',
        'refuse.candidate_withdrawn': '이 후보는 사퇴했습니다. 뒤로 가서 다른 후보를 고르세요.',
        'refuse.candidate_not_found': '이 투표소에 없는 후보입니다.', 'refuse.place_not_found': '없는 투표소입니다.',
        'refuse.busy': '서버가 바쁩니다. 투표는 기록되지 않았습니다. 잠시 후 다시 시도하세요.',
        'refuse.other': '투표가 거부되었습니다: {message}',
        issuanceCode: '발급 코드',
        issuanceCodeHelp: '받은 그대로 33자의 문자와 숫자. 띄어쓰기, 대시, 대소문자는 상관없습니다. 이 코드로 투표 자격 증명을 한 번 받습니다.',
        codeBad: '발급 코드 형식이 아닙니다. 코드는 영문자 A–Z와 숫자 2–7로 된 33자입니다.',
        codeMistyped: '코드에 오타가 있습니다. 한 글자가 틀렸거나 두 글자의 순서가 바뀌었습니다. 받은 안내문과 비교해 보세요.',
        checkingCode: '코드를 확인하는 중…',
        anonymousIntro: '이 투표소는 익명 투표를 사용합니다. 코드로 받는 투표 자격 증명은 서버가 내용을 보지 않고 서명하며, 투표는 자격 증명만으로 하므로 관리자를 포함한 누구도 그 표가 당신의 것임을 알 수 없습니다.',
        credentialFile: '또는 저장해 둔 투표 자격 증명으로 투표하기',
        credentialOtherPlace: '이 자격 증명 파일은 이 투표소의 것이 아닙니다.',
        credentialBad: '이 투표소에서 유효한 투표 자격 증명이 아닙니다.',
        credentialKept: '이 기기에 이 투표소의 투표 자격 증명이 보관되어 있습니다. 후보를 고르고 투표하세요.',
        getCredential: '투표 자격 증명을 받고 투표하기', gettingCredential: '투표 자격 증명을 받는 중…',
        anonymousConfirm: '이제 브라우저가 비밀 투표 자격 증명을 만들고, 서버가 내용을 보지 않고 서명합니다.',
        credentialTitle: '투표 자격 증명이 준비되었습니다',
        credentialReady: '서버가 투표 자격 증명에 서명했습니다. 아직 투표는 되지 않았습니다.',
        credentialWarning: '지금 투표 자격 증명을 저장하세요. 투표할 때까지 이 기기에 보관되지만, 그 전에 잃어버리면 되찾을 수 없습니다. 같은 코드로 자격 증명을 다시 받을 수 없습니다.',
        saveCredential: '투표 자격 증명 저장하기',
        waitWhy: '서버가 시간으로 자격 증명과 당신을 짝지을 수 없도록, 투표 전에 임의의 시간 동안 기다립니다.',
        castingIn: '{seconds}초 후에 투표합니다.',
        comeBack: '이 페이지를 닫고 나중에 다시 와도 됩니다. 이 기기에 보관된 자격 증명이나 저장한 자격 증명으로 투표합니다.',
        anonymousProves: '이 영수증이 증명하는 것',
        anonymousProvesText: '당신의 표가 이 블록에 이 투표소의 키로 서명된 채 원장에 있고 집계되었습니다. 누구나 이 영수증으로 그 표가 바뀌거나 지워지지 않았음을 확인할 수 있습니다.',
        anonymousNotProves: '보여 주지 않는 것',
        anonymousNotProvesText: '누가 투표했는지. 표에는 서버가 보지 않고 서명한 자격 증명만 있고, 원장이나 이 영수증의 어떤 것도 그것을 당신의 코드나 당신과 잇지 않습니다.',
        'refuse.credential_already_issued': '이 코드로 이미 투표 자격 증명이 발급되었습니다. 코드를 잃어버렸다면 관리자에게 새 코드를 요청하세요. 잃어버린 자격 증명은 다시 발급할 수 없습니다.',
        'refuse.credential_already_voted': '이 투표 자격 증명으로 이미 투표했습니다. 자격 증명 하나로 한 번만 투표할 수 있습니다.',
        'refuse.invalid_ballot_signature': '이 투표소에서 유효한 투표 자격 증명이 아닙니다.',
        'refuse.not_anonymous': '이 투표소는 익명 투표를 사용하지 않습니다.',
        'refuse.code_not_authorized': '이 투표소에 등록되지 않은 코드입니다. 확인하고 다시 시도하세요.',
        'refuse.issuance_closed': '이 투표소의 투표가 마감되었습니다.',
        resultsTitle: '{place} 결과', soFar: '현재까지 (투표 중, 자동으로 갱신됩니다)', certifiedAt: '블록 {height}에서 확정됨',
        embargoed: '투표가 끝날 때까지 득표 수를 공개하지 않습니다 ({time}).',
        notCertified: '투표가 마감되었습니다. 결과는 아직 확정되지 않았습니다.', notStarted: '투표가 아직 시작되지 않았습니다.',
        vote: '{n}표', votes: '{n}표', chart: '후보별 득표', share: '득표율', count: '득표', candidate: '후보', resultsPick: '투표소를 고르세요:',
        auditTitle: '투표 영수증 확인', auditIntro: '브라우저가 관리자의 키로 영수증을 직접 확인합니다. 서버의 말을 믿지 않습니다.',
        receipt: '영수증 (.tlog-proof 텍스트)', receiptFile: '또는 영수증 파일 열기', key: '관리자 검증 키',
        keyHelp: '관리자가 다른 곳(공고, 신문)에 공개한 키와 비교하세요. 수정할 수 있습니다.',
        againstHead: '서버의 현재 원장이 이 영수증의 기록을 그대로 포함하는지도 확인',
        verify: '확인', verifying: '확인하는 중…', 'check.format': '영수증을 읽을 수 있음', 'check.key': '검증 키 형식이 올바름',
        'check.signature': '영수증의 헤드에 관리자 서명이 있음',
        'check.inclusion': '투표가 그 헤드에 포함됨 (SHA-256 잎 해시와 RFC 9162 포함 증명)',
        'check.head': '서버의 현재 헤드에 관리자 서명이 있음',
        'check.consistency': '현재 원장이 영수증의 헤드를 이어감 (RFC 9162 일관성 증명)',
        pass: '통과', fail: '실패', skip: '확인 안 함', auditOk: '영수증이 유효합니다.', auditBad: '영수증을 확인할 수 없습니다.',
        altered: '영수증을 확인할 수 없습니다. 투표가 헤드에 포함되지 않으므로 영수증이 변조되었습니다.',
        notSigned: '영수증을 확인할 수 없습니다. 헤드가 이 관리자 키로 서명되지 않았습니다 (위조되었거나 다른 키).',
        rewritten: '원장이 다시 쓰였습니다. 서버의 현재 원장에는 이 영수증이 서명된 기록이 없습니다.',
        auditEvent: '투표소 {place}, 후보 {candidate}에 대한 투표, 이벤트 {index}, 이벤트 {size}개의 서명된 헤드 (블록 {height}).',
        auditHead: '서버의 원장에는 지금 이벤트 {size}개가 있습니다.',
        authTitle: '관리자 콘솔', adminToken: '관리자 토큰', signIn: '로그인', signOut: '로그아웃',
        adminHelp: '토큰은 이 탭의 메모리에만 있습니다. 탭을 닫거나 새로 고치면 로그아웃됩니다.',
        badAdmin: '관리자 토큰이 거부되었습니다. 다시 로그인하세요.', headTitle: '현재 헤드', headTime: '서명 시각: {time}', refresh: '새로 고침',
        createPlace: '투표소 만들기', name: '이름', description: '설명', regStart: '후보 등록 시작', regEnd: '후보 등록 마감',
        voteStart: '투표 시작', voteEnd: '투표 마감', maxCandidates: '최대 후보 수 (비우면 제한 없음)',
        resultsAfterClose: '투표가 끝날 때까지 득표 수를 공개하지 않기', create: '만들기',
        anonymousBallots: '익명 투표: 유권자는 발급 코드를 받고, 누구도 표와 유권자를 이을 수 없습니다',
        created: '투표소 {id}를 만들었습니다.', managePlace: '투표소 관리', place: '투표소', registerCandidate: '후보 등록',
        pledge: '공약', register: '등록', registered: '후보 {id}를 등록했습니다.', withdrawCandidate: '후보 사퇴',
        withdraw: '사퇴 처리', withdrawnDone: '후보 {id}가 사퇴했습니다.', authorizeOne: '유권자 한 명 등록', voter: '유권자 식별자',
        authorize: '등록', tokenOnce: '이 유권자의 투표 토큰 (한 번만 표시됩니다. 지금 전달하세요): {token}',
        reissueOne: '잃어버린 토큰 재발급', reissue: '새 토큰 발급',
        reissueHelp: '등록되었지만 아직 투표하지 않은 유권자에게 새 토큰을 발급합니다. 이전 토큰은 더 이상 쓸 수 없습니다.',
        reissuedOnce: '이 유권자의 새 투표 토큰 (한 번만 표시됩니다. 이전 토큰은 무효입니다): {token}',
        authorizeCsv: 'CSV 파일로 유권자 등록 (한 줄에 한 명)', csvFile: 'CSV 파일', upload: '모두 등록',
        'csvDone.other': '유권자 {n}명을 등록했고 토큰을 {file}(으)로 한 번 내려받았습니다.',
        'csvRefused.other': '{n}줄이 거부되었습니다.',
        csvLine: '{line}번째 줄: {message}', certify: '결과 확정', certifyButton: '확정', certified: '블록 {height}에서 결과를 확정했습니다.',
        failed: '거부됨: {message}',
    },
};

/** Where the visitor's pick of language is kept across reloads (a language code, nothing personal). */
const storedLanguage = 'voteledger.language';

let language = (() => {
    try {
        const kept = localStorage.getItem(storedLanguage);
        if (kept in strings) return kept;
    } catch { /* storage disabled: follow the browser */ }
    return (navigator.language || 'en').toLowerCase().startsWith('ko') ? 'ko' : 'en';
})();

export const languages = { en: 'English', ko: '한국어' };

export function currentLanguage() {
    return language;
}

/** Switches the pages to `code`; `remember` keeps the visitor's pick for the next visit. */
export function setLanguage(code, { remember = false } = {}) {
    language = code in strings ? code : 'en';
    document.documentElement.lang = language;
    if (!remember) return;
    try {
        localStorage.setItem(storedLanguage, language);
    } catch { /* storage disabled: the pick lasts for this page only */ }
}

/** The text for `key` in the current language, with `{name}` placeholders filled from `values`. */
export function t(key, values = {}) {
    const text = strings[language][key] ?? strings.en[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ''));
}

/** The text for `key` in the plural form that `n` takes in the current language (`key.one`, `key.other`). */
export function plural(key, n, values = {}) {
    const form = new Intl.PluralRules(language).select(n);
    const chosen = strings[language][`${key}.${form}`] ? `${key}.${form}` : `${key}.other`;
    return t(chosen, { n, ...values });
}
